"""Parts of the install a subcommand needs: the extras, checked before it runs.

A subcommand that reads the Kubernetes API needs the ``kube`` extra (lightkube and its HTTP
client); ``pod-resources`` needs the ``podresources`` extra (grpcio and protobuf). Without it
the run ends at once with EXIT_NOT_INSTALLED and one line that names the
extra, the module that is missing and the pip command that installs it where this copy of
dra-metadata comes from: a checkout (an editable install), a wheel file, or an index.
"""

from __future__ import annotations

import sys
from pathlib import Path

DISTRIBUTION = "dra-metadata"
EXTRA_MODULES = {
    "kube": ("lightkube", "lightkube.models", "httpx2", "httpcore2"),
    "podresources": ("grpc", "google.protobuf"),
}
"""The modules each extra of pyproject.toml installs (a test checks them against it)."""


class MissingExtraError(Exception):
    """A subcommand needs an extra that is not installed: EXIT_NOT_INSTALLED."""

    def __init__(self, reason: str, extra: str, module: str, advice: str) -> None:
        super().__init__(
            f"{reason}: this needs the {extra} extra of {DISTRIBUTION}, which is not installed "
            f"here (no module {module}); {advice}"
        )
        self.extra = extra
        self.module = module


def check_extra(extra: str, reason: str) -> None:
    """Raise MissingExtraError when a module of ``extra`` cannot be imported; ``reason`` says
    why the run needs it ("status reads the Kubernetes API")."""
    for module in EXTRA_MODULES[extra]:
        if not _importable(module):
            raise MissingExtraError(reason, extra, module, install_advice(extra, _origin()))


def _importable(module: str) -> bool:
    """Whether ``module`` can be found, without importing it or its packages (find_spec of a
    submodule imports its package: lightkube's imports all of lightkube)."""
    import importlib.util  # noqa: PLC0415 - only for a subcommand that needs an extra
    from importlib.machinery import PathFinder  # noqa: PLC0415

    top, _, below = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
        for part in below.split(".") if below else ():
            if spec is None or spec.submodule_search_locations is None:
                return False
            spec = PathFinder.find_spec(f"{spec.name}.{part}", spec.submodule_search_locations)
    except (ImportError, ValueError):  # a parent package missing, or broken
        return False
    return spec is not None


def _origin() -> str | None:
    """The direct_url.json of this distribution (where pip installed it from), if any."""
    import importlib.metadata  # noqa: PLC0415 - slow to import: only when something is missing

    try:
        return importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return None


def install_advice(extra: str, origin: str | None) -> str:
    """The pip command that adds ``extra`` to this install, given its direct_url.json.

    From a checkout (editable): ``pip install -e '.[kube]'`` in that checkout; from a wheel
    file that is still there: that file with the extra; otherwise the name with the extra,
    and the form for a checkout.
    """
    pip = f"{sys.executable} -m pip install"
    source = _source_of(origin)
    if source is not None and source[1] and source[0].is_dir():
        return f"in the checkout it is installed from, run: cd {source[0]} && {pip} -e '.[{extra}]'"
    if source is not None and source[0].is_file():
        return f"run: {pip} '{source[0]}[{extra}]'"
    return (
        f"run: {pip} '{DISTRIBUTION}[{extra}]' (in a checkout of the sources: "
        f"{pip} -e '.[{extra}]')"
    )


def _source_of(origin: str | None) -> tuple[Path, bool] | None:
    """(the local directory or file it was installed from, editable), or None."""
    import json  # noqa: PLC0415 - only when something is missing
    from urllib.parse import unquote, urlparse  # noqa: PLC0415

    if origin is None:
        return None
    try:
        document = json.loads(origin)
        url = urlparse(str(document["url"]))
    except (ValueError, TypeError, KeyError):
        return None
    if url.scheme != "file":
        return None
    editable = isinstance(document.get("dir_info"), dict) and bool(
        document["dir_info"].get("editable")
    )
    return Path(unquote(url.path)), editable
