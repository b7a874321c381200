"""Exit codes and error reporting: one line on stderr, an exit code a script can act on."""

from __future__ import annotations

import dataclasses
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import dra_metadata
from dra_metadata import (
    DeviceMetadataError,
    MetadataDecodeError,
    MetadataValidationError,
    StaleMetadataError,
)
from dra_metadata._model._errors import shown_names
from dra_metadata._reading._paths import ROOT_ENVIRONMENT_VARIABLE
from dra_metadata.cli import _signals
from dra_metadata.cli._output import safe_text

PROGRAM = "dra-metadata"

EXIT_OK = 0
EXIT_NOT_READY = 1
"""Not ready: timed out, not found, invalid files in ``validate``, output not written, a device
failing ``health --fail-on``."""
EXIT_USAGE = 2
EXIT_INVALID = 3
"""The data exists but cannot be decoded, is invalid (``--validate``) or the files disagree."""
EXIT_STALE = 4
"""Stale view: the driver replaced a file on the host; restart the container to see it."""
EXIT_KUBE_API = 5
"""The Kubernetes API refused (401, 403), could not be reached (no configuration, a kubeconfig,
certificate file or exec plugin that cannot be used, connection refused, TLS), did not answer
by the deadline of a request, or answered what cannot be used: a deployment to fix, not data to
wait for. Also the kubelet's PodResources API (``pod-resources``): no socket, permission
denied, nothing listening, no answer in time, a method it does not serve."""
EXIT_UNREADABLE = 6
"""A file or directory exists but cannot be read: permission denied, an I/O error, or an entry
that is no regular file (a FIFO, a directory, a symlink loop) where a metadata file should be."""
EXIT_NOT_INSTALLED = 7
"""A part of the install is missing: the subcommand needs an extra (``kube``) that is not
installed; the message names it and the pip command that installs it."""
EXIT_NOT_EXECUTABLE = 126
"""``exec``: COMMAND was found but cannot be run (as a shell says it)."""
EXIT_COMMAND_NOT_FOUND = 127
"""``exec``: COMMAND was not found (as a shell says it)."""
EXIT_INTERNAL_ERROR = 70
"""A bug in this command (EX_SOFTWARE); ``--debug`` shows its traceback."""
EXIT_INTERRUPTED = _signals.EXIT_INTERRUPTED
EXIT_BROKEN_PIPE = 141
"""Whoever read the output went away (``| head -1``): 128 + SIGPIPE, as Unix tools end."""
EXIT_TERMINATED = _signals.EXIT_TERMINATED

EXIT_CODES_HELP = (
    "exit codes: 0 ok, 1 not ready or not found (health --fail-on: a device failing), 2 usage, "
    "3 undecodable or invalid data, "
    "4 stale view (restart the container), 5 Kubernetes API or kubelet refused or "
    "unreachable, 6 cannot read (permission denied, I/O error, not a regular file), 7 a part "
    "of the install is "
    "missing (an extra: the message says what to install), 70 "
    "internal error, 126/127 exec: COMMAND not runnable/not found, 130 interrupted, 141 output "
    "closed, 143 terminated"
)


class UsageError(Exception):
    """A command line that cannot be run as given: exit 2, one line saying why."""


def complain(message: str, *, program: str = PROGRAM) -> None:
    """One line on stderr, prefixed with the program's name; text from files shown safely."""
    if sys.stderr is None:  # closed (2>&-): the exit code says it all
        return
    sys.stderr.write(f"{program}: {safe_text(message)}\n")
    sys.stderr.flush()


def exit_code(error: BaseException) -> int:
    """The exit code of an error the library raised."""
    if isinstance(error, StaleMetadataError):
        return EXIT_STALE
    if isinstance(error, dra_metadata.KubeAPIError) or (
        isinstance(error, dra_metadata.PodResourcesError)
        and not isinstance(error, dra_metadata.MetadataNotFoundError)
    ):
        return EXIT_KUBE_API
    if isinstance(
        error, (MetadataDecodeError, MetadataValidationError, dra_metadata.MetadataConflictError)
    ):
        return EXIT_INVALID
    if isinstance(error, dra_metadata.InvalidNameError):
        return EXIT_USAGE
    if isinstance(error, dra_metadata.MetadataReadError) or (
        isinstance(error, OSError)
        and not isinstance(error, FileNotFoundError)
        and error.errno in _UNREADABLE_ERRNOS
    ):
        return EXIT_UNREADABLE
    return EXIT_NOT_READY


_UNREADABLE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EIO, errno.ELOOP})


_ERRNO_HINTS = {
    errno.EIO: "an I/O error: check the volume or device it is on (the node's kernel log)",
    errno.ELOOP: "a symlink loop: check where the symlinks point (ls -l)",
    errno.ENOTDIR: "a directory is expected there, not a file: check the path (the metadata "
    f"root, --root or ${ROOT_ENVIRONMENT_VARIABLE}, is the directory that holds resourceclaims/ "
    "and resourceclaimtemplates/)",
    errno.ENAMETOOLONG: "the path is too long for the system (a name in it over 255 bytes, or "
    "all of it over 4095): check --root and the names given",
}


def what_to_check(error: BaseException, *, several: bool = False) -> str:
    """For an error that says a file or directory cannot be read: what to check next
    (``several``: said of several paths)."""
    number = getattr(error, "errno", None)
    if number in {errno.EACCES, errno.EPERM}:
        who = f"uid {os.geteuid()}, gid {os.getegid()}" if hasattr(os, "geteuid") else "this user"
        which = "them and of their directories" if several else "it and of its directories"
        return (
            f"check the permissions of {which} for the user this runs as "
            f"({who}): the pod's securityContext (runAsUser, fsGroup) or the driver's file mode"
        )
    if number in _ERRNO_HINTS:
        return _ERRNO_HINTS[number]
    if isinstance(error, dra_metadata.MetadataReadError):
        return "a metadata file must be a regular file (ls -l shows what it is)"
    return ""


def error_message(error: DeviceMetadataError | OSError) -> str:
    if isinstance(error, DeviceMetadataError):
        message = str(error)
    elif error.filename is not None:
        message = f"{error.filename}: {error.strerror}"
    else:
        message = str(error.strerror or error)
    if isinstance(error, dra_metadata.WaitTimeoutError):
        message = f"timed out: {message}"
    elif exit_code(error) == EXIT_UNREADABLE:
        hint = what_to_check(error)
        if hint:
            message = f"{message}; {hint}"
    return message


def report_findings(error: MetadataValidationError) -> int:
    """Validation findings as ``validate`` lists them: per file a line, then one per finding."""
    by_file: dict[Path | None, list[str]] = {}
    for finding in error.errors:
        where = finding.file if finding.file is not None else error.path
        by_file.setdefault(where, []).append(f"{finding.path}: {_finding_text(finding)}")
    for where, lines in by_file.items():
        count = f"{len(lines)} validation error{'s' if len(lines) != 1 else ''}"
        complain(f"{where}: {count}" if where is not None else count)
        for line in lines:
            complain_more(f"  {line}")
    return EXIT_INVALID


def _finding_text(finding: dra_metadata.FieldError) -> str:
    """A finding without its file and path (its header line names the file)."""
    return str(dataclasses.replace(finding, file=None)).removeprefix(f"{finding.path}: ")


def complain_more(line: str) -> None:
    """A line on stderr that continues the one before (no program name)."""
    if sys.stderr is None:
        return
    sys.stderr.write(f"{safe_text(line)}\n")
    sys.stderr.flush()


def report_unreadable(problems: Sequence[DeviceMetadataError]) -> int:
    """After a listing that shows them: say how many paths could not be read, which (as
    messages list names: the first ten), what to check, and return EXIT_UNREADABLE."""
    several = len(problems) > 1
    hints = dict.fromkeys(
        hint for problem in problems if (hint := what_to_check(problem, several=several))
    )
    paths = shown_names([str(problem.path) for problem in problems])
    count = f"{len(problems)} path{'s' if several else ''}"
    complain(f"{count} could not be read ({paths}); " + "; ".join(hints))
    return EXIT_UNREADABLE


def report_stale(paths: Sequence[Path | None]) -> int:
    """Say which files are stale views and return EXIT_STALE."""
    names = shown_names([str(path) for path in paths])
    complain(
        f"stale view of {names}: the driver replaced "
        f"{'this file' if len(paths) == 1 else 'these files'} on the host and this container "
        "still sees the old content; restart the container to see the new one"
    )
    return EXIT_STALE
