"""The console script imports pathlib without urllib.parse (and ipaddress), as Python 3.13 does.

On 3.10 to 3.12 pathlib imports urllib.parse for PurePath.as_uri alone; the console script,
which owns its process, imports pathlib with a stand-in for it that is taken out again. What a
run then has must be what it would have had: as_uri gives the same answers, and a later import
of urllib.parse loads the real module. Each case runs in a fresh interpreter, whose imports are
its own.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from helpers import run_python

_BEFORE = "import sys\nfrom dra_metadata.cli._entry import import_pathlib_without_urllib\n"

_URIS = textwrap.dedent(
    """
    import pathlib
    for text in ["/", "/a b/é", "/x/%41?#;=", "/\\udcff/tab\\there"]:
        print(pathlib.PurePosixPath(text).as_uri())
    """
)


def _run(code: str) -> list[str]:
    result = run_python(_BEFORE + textwrap.dedent(code))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return result.stdout.splitlines()


def test_pathlib_gives_the_same_uris_as_with_urllib_imported_first() -> None:
    with_stand_in = _run("import_pathlib_without_urllib()\n" + _URIS)
    usual = _run("import urllib.parse\nimport_pathlib_without_urllib()\n" + _URIS)
    assert with_stand_in == usual
    assert with_stand_in[:2] == ["file:///", "file:///a%20b/%C3%A9"]


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="pathlib imports no urllib on 3.13")
def test_neither_urllib_parse_nor_ipaddress_is_loaded_and_pathlib_is() -> None:
    code = """
    import_pathlib_without_urllib()
    print(sorted(m for m in ("pathlib", "urllib", "urllib.parse", "ipaddress") if m in sys.modules))
    """
    assert _run(code) == ["['pathlib']"]


def test_a_later_import_of_urllib_parse_loads_the_real_module() -> None:
    code = """
    import_pathlib_without_urllib()
    import urllib.parse
    from urllib.parse import quote_from_bytes, urlsplit
    print(urllib.parse.__spec__.name, sys.modules["urllib"].parse is urllib.parse)
    print(urlsplit("https://[::1]:6443/x").hostname, quote_from_bytes(b"a b"))
    """
    assert _run(code) == ["urllib.parse True", "::1 a%20b"]


def test_nothing_changes_where_urllib_parse_is_already_imported() -> None:
    code = """
    import urllib.parse
    import_pathlib_without_urllib()
    import pathlib
    print(getattr(pathlib, "urlquote_from_bytes", urllib.parse.quote_from_bytes)
          is urllib.parse.quote_from_bytes)
    """
    assert _run(code) == ["True"]


def test_nothing_changes_where_pathlib_is_already_imported() -> None:
    code = """
    import pathlib
    import_pathlib_without_urllib()
    print("urllib.parse" in sys.modules, type(sys.modules["pathlib"]).__name__)
    """
    assert _run(code) == [f"{sys.version_info < (3, 13)} module"]
