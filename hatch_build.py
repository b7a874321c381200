"""Build hook of hatchling: compiles the decoder's attribute check
(dra_metadata/_decoding/_speedups.c).

A wheel built where a C compiler and the Python headers are found holds the compiled module,
built against the limited API of CPython 3.10 (the source defines Py_LIMITED_API) as
``_speedups.abi3.so`` and tagged ``cp310-abi3-<platform>``: one wheel serves every supported
CPython (3.10 and later) of its platform. Anywhere else the build still succeeds, with a
warning, as a pure-Python wheel whose decoder does the same checks more slowly. An editable
install compiles the module next to its source (removing any module of that name it finds
there first). ``DRA_METADATA_BUILD_PURE=1`` skips the compiler; ``CC`` names another one.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("dra_metadata", "_decoding", "_speedups.c")
PURE_BUILD = "DRA_METADATA_BUILD_PURE"
MODULE_NAME = "_speedups.abi3.so"
"""The compiled module's file name: the stable ABI's, which every CPython 3.10+ imports."""
OLDEST_PYTHON = "cp310"
"""The Python tag of the wheel: the limited API version the source asks for (Py_LIMITED_API)."""


def wheel_tag() -> str:
    """``cp310-abi3-<platform>``, the platform named as bdist_wheel names it (linux_x86_64)."""
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{OLDEST_PYTHON}-abi3-{platform}"


class SpeedupsBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the compiled module to wheels and editable installs."""

    PLUGIN_NAME = "custom"
    _temporary: str | None = None
    """Where the module of a wheel is compiled, removed once the wheel is written."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if os.environ.get(PURE_BUILD, "") not in ("", "0"):
            self.app.display_info(f"{PURE_BUILD} is set: building without the compiled module")
            return
        name = MODULE_NAME
        if version == "editable":
            target = Path(self.root, "dra_metadata", "_decoding", name)
            # A failed build leaves no module of another source, and no module of another
            # name (a version-tagged one would be imported before the abi3 one) stays.
            for stale in target.parent.glob("_speedups.*"):
                if stale.suffix in {".so", ".pyd"}:
                    stale.unlink()
        else:
            self._temporary = tempfile.mkdtemp(prefix="dra-metadata-build-")
            target = Path(self._temporary, name)
        problem = _compile(Path(self.root, SOURCE), target)
        if problem is not None:
            self.app.display_warning(
                f"dra-metadata: the compiled attribute check was not built ({problem}); "
                "the package works without it, with a slower decoder"
            )
            return
        if version != "editable":
            build_data["force_include"][str(target)] = f"dra_metadata/_decoding/{name}"
            build_data["pure_python"] = False
            build_data["tag"] = wheel_tag()

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:  # noqa: ARG002 - the interface of hatchling
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None


def _compile(source: Path, target: Path) -> str | None:
    """Compile ``source`` into the extension module ``target``; what went wrong, or None."""
    config = sysconfig.get_config_var
    compiler = os.environ.get("CC") or config("CC") or "cc"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    command = [
        *shlex.split(compiler),
        *shlex.split(config("CFLAGS") or ""),
        *shlex.split(config("CCSHARED") or "-fPIC"),
        "-shared",
        f'-DSOURCE_SHA256="{digest}"',  # which source the module was built from (tests)
        f"-I{sysconfig.get_paths()['include']}",
        str(source),
        "-o",
        str(target),
    ]
    try:
        result = subprocess.run(  # noqa: S603 - the compiler and flags this Python was built with
            command, capture_output=True, text=True, timeout=300, check=False
        )
    except OSError as error:
        return f"{shlex.join(command)}: {error}"
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()[-2000:]
        return f"{shlex.join(command)} exited with {result.returncode}: {output}"
    return None
