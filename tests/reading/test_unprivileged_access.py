"""A reader without privileges: every read, watch and write of what it may not open is a typed
error with EACCES that names the path.

Run as user nobody (or as root without the capabilities that bypass permissions).
"""

from __future__ import annotations

import errno
import shutil
import tempfile
from pathlib import Path

from dra_metadata.testing import MetadataTree
from fault_children import DRIVER, child_json

from helpers import unprivileged

UNPRIVILEGED = """
root = Path(sys.argv[1])
hidden = root / "resourceclaims" / "hidden" / "r" / "nic.example.com-metadata.json"
locked = root / "resourceclaims" / "locked" / "r" / "nic.example.com-metadata.json"
short = {"timeout": 5, "poll_interval": 0.05}
print(json.dumps({
    "read a mode-000 file": failure(lambda: read_metadata_file(hidden)),
    "watch a mode-000 file": failure(lambda: next(watch_metadata_file(hidden, **short))),
    "wait on a mode-000 directory": failure(
        lambda: wait_for_network_data("locked", "r", root=root, **short)),
    "watch a file in a mode-000 directory": failure(
        lambda: next(watch_claim_metadata("locked", "r", root=root, driver="nic.example.com", **short))),
    "watch a request below a mode-000 claim directory": failure(
        lambda: next(watch_claim_metadata("sealed", "r", root=root, **short))),
    "write below a mode-000 claim directory": failure(
        lambda: write_metadata_file(root / "resourceclaims" / "sealed" / "r" / "new" / "x", metadata(1))),
    "write into a directory of root's": failure(
        lambda: write_metadata_file(root / "resourceclaims" / "x" / "d-metadata.json", metadata(1))),
}))
"""


def test_an_unprivileged_reader() -> None:
    options, _ = unprivileged()
    root = Path(tempfile.mkdtemp(prefix="dra-metadata-faults-"))
    try:
        root.chmod(0o755)
        tree = MetadataTree(root)
        tree.add_claim("hidden", "r", DRIVER, ["n"]).chmod(0o000)
        tree.add_claim("locked", "r", DRIVER, ["n"]).parent.chmod(0o000)
        tree.add_claim("sealed", "r", DRIVER, ["n"]).parent.parent.chmod(0o000)
        (root / "resourceclaims").chmod(0o555)  # nobody may write here; not even root, without caps
        results = child_json(UNPRIVILEGED, str(root), **options)
        for what, error in results.items():
            assert error is not None, what
            assert error["errno"] == errno.EACCES, (what, error)
            expected = "MetadataWriteError" if what.startswith("write") else "MetadataReadError"
            assert error["type"] == expected, what
            assert str(root) in error["message"], what
    finally:
        for directory in [root, *root.rglob("*")]:
            if directory.is_dir():
                directory.chmod(0o755)
        shutil.rmtree(root)
