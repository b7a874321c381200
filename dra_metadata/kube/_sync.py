"""Run the asyncio implementation from synchronous code, on a private event loop.

The watch and the waits are written once, for asyncio, where a stream can be read while
deadlines and a stop event are looked at; the synchronous twins drive that code on an event
loop of their own. Each step runs in the calling thread, or, when that thread already runs an
event loop (Jupyter, an async web handler calling synchronous code), in a worker thread while
the caller blocks, as a synchronous call does. A cancelled step (Ctrl-C) cancels the
coroutine, so its connections are closed before the exception goes on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")


def _loop_runs_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_here(loop: asyncio.AbstractEventLoop, task: asyncio.Task[_T]) -> _T:
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():  # interrupted (KeyboardInterrupt): let the coroutine clean up
            task.cancel()
            loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        raise


def _run_in_worker(loop: asyncio.AbstractEventLoop, task: asyncio.Task[_T]) -> _T:
    """Drive ``loop`` in a worker thread until ``task`` is done; this thread waits for it."""
    finished = threading.Event()

    def drive() -> None:
        try:  # the task keeps its outcome (read below); gather keeps it from being raised here
            loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        finally:
            finished.set()

    worker = threading.Thread(target=drive, name="dra-metadata private event loop", daemon=True)
    worker.start()
    # An Event, not join(): a join interrupted by a signal can take the thread for ended.
    try:
        finished.wait()
    except BaseException:  # interrupted while waiting: cancel, and wait for the clean-up
        loop.call_soon_threadsafe(task.cancel)
        finished.wait()
        raise
    finally:
        if finished.is_set():
            worker.join()
    return task.result()


def _run_step(loop: asyncio.AbstractEventLoop, step: Coroutine[Any, Any, _T]) -> _T:
    task = loop.create_task(step)
    if _loop_runs_here():
        return _run_in_worker(loop, task)
    return _run_here(loop, task)


def run(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """The result of the coroutine ``make()`` returns, run on a private event loop."""
    loop = asyncio.new_event_loop()
    try:
        return _run_step(loop, make())
    finally:
        try:
            _run_step(loop, loop.shutdown_asyncgens())
        finally:
            loop.close()


async def _next(iterator: AsyncIterator[_T]) -> _T:
    return await iterator.__anext__()


def iterate(make: Callable[[], AsyncIterator[_T]]) -> Iterator[_T]:
    """Iterate the async iterator ``make()`` returns, on a private event loop.

    Each step decides for itself where it runs, so the iterator may be advanced from code
    with and without a running event loop alike.
    """
    loop = asyncio.new_event_loop()
    iterator = make()
    try:
        while True:
            try:
                item = _run_step(loop, _next(iterator))
            except StopAsyncIteration:
                return
            yield item
    finally:
        try:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                _run_step(loop, aclose())
            _run_step(loop, loop.shutdown_asyncgens())
        finally:
            loop.close()
