"""examples/build_sample_tree.py: help writes nothing, the committed tree only when asked, no
tree written over.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import SAMPLE


class TestSampleTreeBuilder:
    SCRIPT = str(SAMPLE.parent / "build_sample_tree.py")

    def _run(self, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, self.SCRIPT, *arguments],
            capture_output=True,
            text=True,
            cwd=cwd,
            check=False,
            timeout=60,
        )

    def test_help_writes_nothing(self, tmp_path: Path) -> None:
        result = self._run("--help", cwd=tmp_path)
        assert result.returncode == 0
        assert "usage: build_sample_tree.py" in result.stdout
        assert list(tmp_path.iterdir()) == []

    def test_the_committed_tree_only_when_asked(self, tmp_path: Path) -> None:
        before = {path: path.stat().st_mtime_ns for path in SAMPLE.rglob("*")}
        result = self._run(cwd=tmp_path)
        assert result.returncode == 2
        assert "give DIR, or --committed" in result.stderr
        refused = self._run(str(SAMPLE), cwd=tmp_path)
        assert refused.returncode == 2
        assert "use --committed" in refused.stderr
        assert {path: path.stat().st_mtime_ns for path in SAMPLE.rglob("*")} == before

    def test_a_tree_is_not_written_over(self, tmp_path: Path) -> None:
        assert self._run(str(tmp_path / "t"), cwd=tmp_path).returncode == 0
        again = self._run(str(tmp_path / "t"), cwd=tmp_path)
        assert again.returncode == 2
        assert "is not empty" in again.stderr
        assert self._run(str(tmp_path / "t"), "--overwrite", cwd=tmp_path).returncode == 0
