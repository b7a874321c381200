"""Generate the PodResources messages from the project's own ``api.proto`` (grpcio-tools).

    python tools/generate_podresources.py            # rewrite the committed modules
    python tools/generate_podresources.py OUT_DIR    # write them below OUT_DIR instead

Writes ``dra_metadata/podresources/_proto/api_pb2.py`` (the message classes) and its ``.pyi``
(their types, protoc's own stub output). No gRPC stub is generated: the client calls each
method by its path with ``channel.unary_unary``. The proto is compiled from the repository's
root, so that it registers as ``dra_metadata/podresources/_proto/api.proto`` in protobuf's
descriptor pool, a name no other package's ``api.proto`` takes.

The dev extra pins the grpcio-tools release (pyproject.toml): its protoc decides the gencode
version that api_pb2.py checks at import, which is the floor of the ``podresources`` extra's
protobuf. tests/podresources/ regenerates into a temporary folder and fails on any drift.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROTO = Path("dra_metadata/podresources/_proto/api.proto")
"""The source, relative to the repository's root (its name in the descriptor pool)."""
GENERATED = (
    Path("dra_metadata/podresources/_proto/api_pb2.py"),
    Path("dra_metadata/podresources/_proto/api_pb2.pyi"),
)
"""What generate() writes, relative to its output folder."""


def generate(output: Path) -> list[Path]:
    """Compile api.proto into ``output`` (the repository's root by default); the files written."""
    from grpc_tools import protoc  # noqa: PLC0415 - the dev extra's generator

    output.mkdir(parents=True, exist_ok=True)
    arguments = [
        "grpc_tools.protoc",
        f"--proto_path={REPO}",
        f"--python_out={output}",
        f"--pyi_out={output}",
        str(REPO / PROTO),
    ]
    if protoc.main(arguments) != 0:
        raise SystemExit(f"protoc could not compile {PROTO} (its message is above)")
    return [output / path for path in GENERATED]


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else REPO
    for path in generate(output):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
