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
call. The handlers stay deferred from the moment a step is made until its task has been let
go of, and while the private loop is made and closed: a signal that lands once the task has
ended follows its result the same way, one that lands while the handlers are being set or put
back is raised as soon as they are back, and none lands in a half-made loop or in the Python
code that freeing a task runs (where a raising handler is printed as "Exception ignored" and
lost). A second such signal during the clean-up raises at once.
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
    """While installed: a signal whose Python handler raises does not raise where it lands.

    What the handler raised is kept (``raised``) to be raised once the code it landed in has
    come to a point where raising leaves nothing half done; a ``task`` running meanwhile is
    cancelled, so that its clean-up runs first."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.loop = loop
        self.task: asyncio.Task[Any] | None = None
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
        """Put every handler back, even when one put back first raises meanwhile."""
        self._restore(list(self.previous.items()))

    def _restore(self, handlers: list[tuple[int, Any]]) -> None:
        if handlers:
            number, handler = handlers.pop()
            try:
                signal.signal(number, handler)
            finally:
                self._restore(handlers)

    def _handle(self, number: int, frame: FrameType | None) -> None:
        handler = self.previous[number]
        if self.raised is not None:
            handler(number, frame)  # a second signal: as it would
            return
        try:
            handler(number, frame)
        except BaseException as error:  # noqa: BLE001 - raised where nothing is left half done
            self.raised = error
            # Cancelled from the loop, never from inside the step the signal may have landed
            # in; this also wakes a loop that waits in select. A task that has ended leaves
            # its result to be dropped for what the handler raised.
            task = self.task
            if task is not None and not task.done() and self.loop is not None:
                self.loop.call_soon_threadsafe(task.cancel)


def _deferring_signals(
    signals: _SignalsCancel, call: Callable[[], _T], undo: Callable[[_T], object]
) -> _T:
    """``call()`` with ``signals`` installed: a signal that lands meanwhile is raised once the
    handlers are back, after ``undo`` of what ``call`` returned (an event loop is never left
    half made or half closed, a step's result is dropped)."""
    try:
        try:
            signals.install()
            result = call()
        finally:
            signals.restore()
    except BaseException:
        if signals.raised is None:
            raise
        raise signals.raised from None
    if signals.raised is not None:  # landed once ``call`` had ended, before the restore
        undo(result)
        raise signals.raised from None
    return result


def _close(loop: asyncio.AbstractEventLoop) -> None:
    loop.close()


def _keep(_: object) -> None:
    pass


def _new_loop() -> asyncio.AbstractEventLoop:
    """A private event loop, never left half made by a signal."""
    return _deferring_signals(_SignalsCancel(None), asyncio.new_event_loop, _close)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close ``loop``, never left half closed by a signal."""
    _deferring_signals(_SignalsCancel(None), loop.close, _keep)


def _drive(
    loop: asyncio.AbstractEventLoop,
    signals: _SignalsCancel,
    make_step: Callable[[], Coroutine[Any, Any, _T]],
) -> _T:
    task = loop.create_task(make_step())
    signals.task = task
    if signals.raised is not None:  # landed before the task was there to cancel
        task.cancel()
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():  # a second signal: let the coroutine clean up all the same
            task.cancel()
            with contextlib.suppress(BaseException):  # a third: go on to raising
                loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        raise
    finally:
        # The task is let go of as this returns, while the signals are still deferred: freeing
        # it runs Python code (the loop's weak set of tasks), and a handler that raised in
        # there would be printed and lost.
        signals.task = None


def _run_here(
    loop: asyncio.AbstractEventLoop, make_step: Callable[[], Coroutine[Any, Any, _T]]
) -> _T:
    signals = _SignalsCancel(loop)
    return _deferring_signals(signals, lambda: _drive(loop, signals, make_step), _keep)


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


def _run_step(
    loop: asyncio.AbstractEventLoop, make_step: Callable[[], Coroutine[Any, Any, _T]]
) -> _T:
    """Run the coroutine ``make_step()`` makes on ``loop``, here or in a worker thread."""
    if _loop_runs_here():
        return _run_in_worker(loop, loop.create_task(make_step()))
    return _run_here(loop, make_step)


def run(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """The result of the coroutine ``make()`` returns, run on a private event loop."""
    loop = _new_loop()
    try:
        return _run_step(loop, make)
    finally:
        try:
            _run_step(loop, loop.shutdown_asyncgens)
        finally:
            _close_loop(loop)


async def _next(iterator: AsyncIterator[_T]) -> _T:
    return await iterator.__anext__()


def iterate(make: Callable[[], AsyncIterator[_T]]) -> Iterator[_T]:
    """Iterate the async iterator ``make()`` returns, on a private event loop.

    Each step decides for itself where it runs, so the iterator may be advanced from code
    with and without a running event loop alike.
    """
    iterator = make()
    loop = _new_loop()
    try:
        while True:
            try:
                item = _run_step(loop, lambda: _next(iterator))
            except StopAsyncIteration:
                return
            yield item
    finally:
        try:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                _run_step(loop, aclose)
            _run_step(loop, loop.shutdown_asyncgens)
        finally:
            _close_loop(loop)
