"""The documentation site as a reader's browser shows it: built, served on 127.0.0.1, opened in
headless Chromium (Debian's chromium), driven over the DevTools protocol.

The protocol runs over a pipe (``--remote-debugging-pipe``: file descriptors 3 and 4 of the
browser, messages ending with a NUL byte), so no port is opened and no client package is
needed. Without Chromium the tests that use it are skipped, saying so.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CODE_BLOCK_WIDTH = 80
"""Characters of a code block line that the theme shows without scrolling on a desktop screen:
Material's content column (61rem grid, both sidebars) holds 80.2 characters of its code font
(13.6 px at 1280 px wide, 15 px at 1920 px: the same count), measured in Chromium."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
SKIP_REASON = (
    "no Chromium to open the site in: install Debian's chromium (apt-get install chromium), "
    "or put chromium on PATH"
)
_LAUNCH_CHROMIUM = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.execvp(sys.argv[3], sys.argv[3:])"
)


def chromium() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def build_site(directory: Path) -> Path:
    """``mkdocs build --strict`` of the repository's docs into ``directory``."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(directory)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-5000:]
    return directory


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


@contextlib.contextmanager
def served(directory: Path) -> Iterator[str]:
    """``directory`` served over HTTP on 127.0.0.1 (a thread): its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class Browser:
    """One headless Chromium with one page, its window ``width`` x ``height`` pixels."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 1000) -> None:
        self.profile = tempfile.mkdtemp(prefix="dra-metadata-chromium-")
        browser_in, self._send = self._pipe(browser_reads=True)
        browser_out, self._receive = self._pipe(browser_reads=False)
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={self.profile}",
            "--remote-debugging-pipe",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _LAUNCH_CHROMIUM,
                str(browser_in),
                str(browser_out),
                executable,
                *flags,
            ],
            pass_fds=(browser_in, browser_out),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(browser_in)
        os.close(browser_out)
        self._buffer = b""
        self._next_id = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    @staticmethod
    def _pipe(*, browser_reads: bool) -> tuple[int, int]:
        """A pipe as (the browser's end, ours), the browser's above 9 so that its launcher's
        dup2 onto 3 and 4 cannot overwrite the other."""
        read, write = os.pipe()
        theirs, ours = (read, write) if browser_reads else (write, read)
        moved = fcntl.fcntl(theirs, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(theirs)
        return moved, ours

    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command (to the page with ``session``); its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._receive, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium ended while answering {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return dict(answer["result"])

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def until(self, expression: str, *, seconds: float = 60) -> Any:
        """The value of ``expression`` once it is truthy; AssertionError after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {seconds} s: {expression}")
            time.sleep(0.1)

    def open(self, url: str) -> None:
        """Load ``url`` and wait until the page and its scripts are loaded."""
        self.call("Page.navigate", session=True, url=url)
        self.until(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def type(self, text: str) -> None:
        """Type ``text`` into the focused element, as a keyboard would insert it."""
        self.call("Input.insertText", session=True, text=text)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._send)
        with contextlib.suppress(OSError):
            os.close(self._receive)
        self.process.kill()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)
