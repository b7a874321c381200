"""The names of the validation profiles and of the kinds of finding, for type checkers.

Their own module: a Literal needs typing, which a validation run never imports otherwise
(``dra_metadata.Profile`` loads this module, and type checkers read it).
"""

from typing import Literal

Profile = Literal["metadata", "strict"]
"""``"metadata"``: the upstream metadata validator's rules; ``"strict"``: the API server's too."""
ErrorType = Literal["required", "invalid", "too_long", "too_many", "duplicate", "not_supported"]
"""What a FieldError found (its ``type``), as Go's ``field.ErrorType`` names it."""
