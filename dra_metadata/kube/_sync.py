"""Run the asyncio implementation from synchronous code, on a private event loop.

The watch and the waits are written once, for asyncio, where a stream can be read while
deadlines and a stop event are looked at; the synchronous twins drive that code on an event
loop of their own in the calling thread. A cancelled step (Ctrl-C) cancels the coroutine, so
its connections are closed before the exception goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")


def _refuse_running_loop(name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"{name} blocks, and this thread runs an asyncio event loop: use its async twin "
        f"a{name} (or run {name} in a worker thread)"
    )


def _run_step(loop: asyncio.AbstractEventLoop, step: Coroutine[Any, Any, _T]) -> _T:
    task = loop.create_task(step)
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():  # interrupted (KeyboardInterrupt): let the coroutine clean up
            task.cancel()
            loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        raise


def run(name: str, make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """The result of the coroutine ``make()`` returns, run on a private event loop."""
    _refuse_running_loop(name)
    loop = asyncio.new_event_loop()
    try:
        return _run_step(loop, make())
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def _next(iterator: AsyncIterator[_T]) -> _T:
    return await iterator.__anext__()


def iterate(name: str, make: Callable[[], AsyncIterator[_T]]) -> Iterator[_T]:
    """Iterate the async iterator ``make()`` returns, on a private event loop."""
    _refuse_running_loop(name)
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
                loop.run_until_complete(aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
