"""``python -m dra_metadata``: the dra-metadata command."""

from dra_metadata.cli import run

if __name__ == "__main__":
    run()
