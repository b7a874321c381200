"""Ctrl-C and SIGTERM during a synchronous API call: the call's task is cancelled, never hung.

The synchronous calls run their asyncio code on a private event loop. A signal whose handler
raises is not raised wherever it lands (between a lock's acquire and the code that releases it,
inside a transport callback), which can leave the clean-up waiting forever for what the
interrupted code would have done; as asyncio.run does, the first cancels the call's task, and
what the handler raised goes on once the task has cleaned up. Each case runs in a child
process of its own, whose main thread receives the signal; a hang is the child's timeout.
Each child sets Python's own SIGINT handler first: one started as a background job of a shell
inherits SIGINT ignored, and Python then installs none.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import textwrap

import pytest

from helpers import run_python

BOUND = 60.0
"""Seconds a child may take (run_python's bound too): a hang ends the test by this, a failure,
not a timing."""

# The signal is sent to the process itself with the lock held: its handler runs at the next
# instruction, before the release, while the coroutine is running (not at an await). Raised
# there, the release is skipped and the clean-up waits for the lock forever.
_CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from dra_metadata.kube._sync import run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    NUMBER = getattr(signal, sys.argv[1])
    cleaned = []

    class Terminated(SystemExit):
        pass

    def raise_terminated(number, frame):
        raise Terminated(143)

    signal.signal(signal.SIGTERM, raise_terminated)

    async def call():
        lock = asyncio.Lock()
        await lock.acquire()
        try:
            os.kill(os.getpid(), NUMBER)
            lock.release()
            await asyncio.sleep(3600)
        finally:
            async with lock:
                cleaned.append(True)

    try:
        run(call)
    except BaseException as error:
        print(type(error).__name__, cleaned == [True], flush=True)
        raise SystemExit(0)
    print("returned", flush=True)
    """
)


@pytest.mark.parametrize(
    ("signal_name", "raised"),
    [("SIGINT", "KeyboardInterrupt"), ("SIGTERM", "Terminated")],
)
def test_a_signal_cancels_the_call_and_is_raised_after_its_clean_up(
    signal_name: str, raised: str
) -> None:
    result = run_python(_CHILD, signal_name)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{raised} True\n", "")


_CLEAN_UP_HANGS = textwrap.dedent(
    """
    import asyncio, os, signal
    from dra_metadata.kube._sync import run

    signal.signal(signal.SIGINT, signal.default_int_handler)

    async def call():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(3600)
        finally:
            print("cleaning up", flush=True)
            await asyncio.Event().wait()  # a clean-up that never ends

    try:
        run(call)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


def test_a_second_ctrl_c_ends_a_clean_up_that_hangs() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CLEAN_UP_HANGS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], BOUND)
        assert ready, f"no clean-up within {BOUND:g} s: the first Ctrl-C did not cancel the call"
        assert child.stdout.readline() == "cleaning up\n"  # the first was a cancellation
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=BOUND)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, stdout, stderr) == (0, "interrupted\n", "")


def test_a_handler_that_does_not_raise_is_only_called() -> None:
    code = textwrap.dedent(
        """
        import asyncio, os, signal
        from dra_metadata.kube._sync import run

        heard = []
        signal.signal(signal.SIGINT, lambda number, frame: heard.append(number))

        async def call():
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.2)
            return "answer"

        print(run(call), heard == [signal.SIGINT], signal.getsignal(signal.SIGINT) is not None)
        """
    )
    result = run_python(code)
    assert (result.returncode, result.stdout, result.stderr) == (0, "answer True True\n", "")


# A signal at any moment of an iteration whose steps are short: most land between the steps'
# tasks (while the handlers are set or put back, once a task has ended and the loop is yet to
# stop, while a task is freed, while the private loop is made), where raising left a task or a
# stop pending that the close of the iterator ran into ("asynchronous generator is already
# running", "Event loop stopped before Future completed"), a half-made loop, or a handler's
# exception printed as ignored and lost, the iteration going on for ever.
_ANY_MOMENT = textwrap.dedent(
    """
    import os, random, signal, threading
    from signal import SIGTERM
    from dra_metadata.kube._sync import iterate

    class Ended(SystemExit):
        pass

    def end(number, frame):
        raise Ended

    async def numbers():
        number = 0
        while True:
            yield number
            number += 1

    outcomes = set()
    for _ in range(40):
        signal.signal(signal.SIGTERM, end)
        timer = threading.Timer(random.uniform(0.001, 0.01), os.kill, (os.getpid(), SIGTERM))
        try:  # the timer may fire before its start() returns
            timer.start()
            for _ in iterate(numbers):
                pass
        except BaseException as error:
            outcomes.add(f"{type(error).__name__}: {error}")
        timer.join()  # its signal is in before the next round
    print(sorted(outcomes))
    """
)


def test_a_signal_between_the_steps_of_an_iteration_ends_it_cleanly() -> None:
    result = run_python(_ANY_MOMENT)
    assert (result.returncode, result.stdout, result.stderr) == (0, "['Ended: ']\n", "")
