"""The README's "Try it" works as written, in a fresh shell."""

from __future__ import annotations

import re
import subprocess

from helpers import COMMAND, SAMPLE


def test_readme_try_it_works_in_a_fresh_shell() -> None:
    """The commands after "Try it" run as written in a shell that activated nothing, and the
    section says how long the test command takes."""
    readme = (SAMPLE.parent.parent / "README.md").read_text()
    section = readme.split("## Try it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", section, flags=re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    assert all(re.search(r"(?<![/\w])dra-metadata ", line) is None for line in lines), (
        "a bare dra-metadata needs an activated venv"
    )
    commands = [line for line in lines if line.startswith(".venv/bin/dra-metadata ")]
    assert commands
    for line in commands:
        result = subprocess.run(  # noqa: S602 - the README's command, as a user types it
            line.replace(".venv/bin/dra-metadata", COMMAND, 1),
            shell=True,
            cwd=SAMPLE.parent.parent,
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 0, (line, result.stderr)
    assert re.search(r"takes about \w+ minutes?", section)
