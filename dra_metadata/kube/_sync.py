"""Run the asyncio implementation from synchronous code, on a private event loop.

The watch and the waits are written once, for asyncio, where a stream can be read while
deadlines and a stop event are looked at; the synchronous twins drive that code on an event
loop of their own. Each step runs in the calling thread, or, when that thread already runs an
event loop (Jupyter, an async web handler calling synchronous code), in a worker thread while
the caller blocks, as a synchronous call does.

Ctrl-C (and SIGTERM, where a Python handler raises for it) ends a step as asyncio.run ends
its task: while the loop runs in the main thread, a signal whose handler raises does not raise
wherever it lands (in the middle of a transport callback, between a lock's acquire and the
block that releases it: states no clean-up can undo, which left the clean-up waiting forever);
the step's task is cancelled instead, its connections are closed, and then the handler's
exception (KeyboardInterrupt, or what a command's SIGTERM handler raises) goes on from the
call. A signal that lands once the task has ended (the loop has yet to stop) follows its result
the same way, and one that lands while the handlers are being set ends the step before its task
runs; neither leaves the loop with a task or a stop pending that the next step would run into.
A second such signal during that clean-up raises at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from types import FrameType

_T = TypeVar("_T")
_DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _loop_runs_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _SignalsCancel:
    """While ``task`` runs here: a signal whose Python handler raises cancels the task, and
    what the handler raised is kept (``raised``) to be raised once the task has ended."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.task: asyncio.Task[Any] | None = None  # set once the handlers are in place
        self.raised: BaseException | None = None
        self.previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers run in the main thread only
        for number in _DEFERRED_SIGNALS:
            handler = signal.getsignal(number)
            if callable(handler):
                self.previous[number] = handler
                signal.signal(number, self._handle)

    def restore(self) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def _handle(self, number: int, frame: FrameType | None) -> None:
        handler = self.previous[number]
        if self.raised is not None:
            handler(number, frame)  # a second signal: as it would
            return
        try:
            handler(number, frame)
        except BaseException as error:  # noqa: BLE001 - raised once the task has ended
            self.raised = error
            # Once the task has ended, the loop is on its way to stop: the step's result is
            # there, and what the handler raised follows it. Before, the task is cancelled,
            # from the loop, never from inside the step the signal may have landed in; this
            # also wakes a loop that waits in select.
            if self.task is not None and not self.task.done():
                self.loop.call_soon_threadsafe(self.task.cancel)


def _run_here(loop: asyncio.AbstractEventLoop, step: Coroutine[Any, Any, _T]) -> _T:
    signals = _SignalsCancel(loop)
    try:
        signals.install()
    except BaseException:  # a signal while the handlers were being set: the step never runs
        signals.restore()
        step.close()
        raise
    # Made once a signal can no longer raise here (it is deferred), so that no task is ever
    # left on the loop for the next step to run into.
    task = loop.create_task(step)
    signals.task = task
    if signals.raised is not None:  # deferred before the task was there to cancel
        task.cancel()
    try:
        result = loop.run_until_complete(task)
    except BaseException:
        if not task.done():  # a second signal: let the coroutine clean up all the same
            task.cancel()
            with contextlib.suppress(BaseException):  # a third: go on to raising
                loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        if signals.raised is None:
            raise
    else:
        if signals.raised is None:
            return result
    finally:
        signals.restore()
    raise signals.raised from None


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
    try:
        in_worker = _loop_runs_here()
    except BaseException:  # a signal before the step started: it never will
        step.close()
        raise
    if in_worker:
        return _run_in_worker(loop, loop.create_task(step))
    return _run_here(loop, step)


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
