"""The compiled module (dra_metadata/_decoding/_speedups.c) is built wherever it can be, from the
source beside it, for the oldest supported Python.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re

import pytest

from helpers import REPO, compiler_and_headers

try:
    from dra_metadata._decoding._speedups import members_as_laid_out as compiled
except ImportError:
    compiled = None


needs_compiled = pytest.mark.skipif(
    compiled is None,
    reason="dra_metadata._decoding._speedups is not built here "
    "(test_the_compiled_module_is_built_wherever_it_can_be says why)",
)


def test_the_compiled_module_is_built_wherever_it_can_be() -> None:
    cannot = compiler_and_headers()
    if cannot is not None:
        pytest.skip(f"{cannot}: the package is built without its compiled module")
    assert compiled is not None, (
        "a C compiler and the Python headers are here, but dra_metadata._decoding._speedups was not "
        "built: reinstall the package (pip install -e .) and read the build's warning"
    )


@needs_compiled
def test_the_compiled_module_is_built_from_the_source_beside_it() -> None:
    """An editable install keeps the module it compiled: changing the C file needs another."""
    from dra_metadata._decoding._speedups import SOURCE_SHA256  # noqa: PLC0415

    source = REPO / "dra_metadata" / "_decoding" / "_speedups.c"
    assert hashlib.sha256(source.read_bytes()).hexdigest() == SOURCE_SHA256, (
        "dra_metadata._decoding._speedups was built from another _speedups.c: run pip install -e . again"
    )


def test_the_module_is_built_for_the_oldest_supported_python() -> None:
    """The limited API version the source asks for, the wheel's tag (hatch_build.py) and the
    oldest Python the package supports are one version."""
    # The build hook, at the root of the checkout: loaded from there, since an installed
    # package (nox's sessions) leaves the checkout off sys.path.
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    assert spec is not None
    assert spec.loader is not None
    hatch_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hatch_build)

    source = (REPO / "dra_metadata" / "_decoding" / "_speedups.c").read_text()
    (limited,) = re.findall(r"^#define Py_LIMITED_API 0x([0-9A-F]{8})$", source, re.MULTILINE)
    major, minor = int(limited[0:2], 16), int(limited[2:4], 16)
    assert f"cp{major}{minor}" == hatch_build.OLDEST_PYTHON
    assert hatch_build.MODULE_NAME == "_speedups.abi3.so"
    assert hatch_build.wheel_tag().startswith(f"cp{major}{minor}-abi3-")
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'requires-python = ">={major}.{minor}"' in pyproject
