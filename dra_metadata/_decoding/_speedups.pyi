from collections.abc import Iterable
from typing import Any

SOURCE_SHA256: str

def members_as_laid_out(values: Iterable[Any], layout: tuple[Any, ...], /) -> list[Any] | None: ...
