"""Conditions: the one notion of "ready" every wait shares, and what their answers mean.

A wait's condition takes the DeviceMetadata of a request and answers: None or True, ready;
a sentence saying why not, or False, not ready. Any other answer is a mistake in the caller's
code (a forgotten ``return``, a number, a list): a TypeError naming what came back, raised
the first time the condition is asked, never a wait that runs to its timeout. A predicate on
one device (``wait_for``) answers by its truth value, as Python's own predicates do
(``lambda device: device.network_data``), but never with a str: a sentence is how a condition
says "not ready, because ...", and its truth value would turn that into ready.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable

from dra_metadata._model._metadata import DeviceMetadata
from dra_metadata._model._models import Device

Condition = Callable[[DeviceMetadata], "str | bool | None"]
"""None or True when the metadata is ready; else a sentence saying why not, or False."""

Verdict = Callable[[DeviceMetadata], "str | None"]
"""A condition whose answer is checked: None when ready, else why not."""

RETURNED_FALSE = "the condition returned False"
"""The reason of a wait whose condition answered False."""

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40


def _shown(answer: object) -> str:
    return f"{type(answer).__name__} {_SHORT.repr(answer)}"


def checked_condition(condition: Condition) -> Verdict:
    """``condition`` with its answer checked: a TypeError for anything but None, a bool or a
    str; True is None (ready), False is RETURNED_FALSE."""
    if not callable(condition):
        raise TypeError(f"condition must be callable, not {type(condition).__name__}")

    def verdict(metadata: DeviceMetadata) -> str | None:
        answer: object = condition(metadata)
        if answer is None or answer is True:
            return None
        if answer is False:
            return RETURNED_FALSE
        if isinstance(answer, str):
            return answer
        raise TypeError(
            f"the condition returned {_shown(answer)}: it must return None or True when the "
            "metadata is ready, else a str saying why not, or False"
        )

    return verdict


def checked_predicate(predicate: Callable[[Device], object]) -> Callable[[Device], bool]:
    """``predicate`` with its answer checked: its truth value, a TypeError for a str."""
    if not callable(predicate):
        raise TypeError(f"predicate must be callable, not {type(predicate).__name__}")

    def checked(device: Device) -> bool:
        answer = predicate(device)
        if isinstance(answer, str):
            raise TypeError(
                f"the predicate returned {_shown(answer)} for device {device.name}: it answers "
                "True (this device is ready) or False; a sentence saying why not is the answer "
                "of a wait_until condition"
            )
        return bool(answer)

    return checked
