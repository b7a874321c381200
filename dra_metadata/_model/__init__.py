"""The bottom layer: the models, their wire form and document, the API versions, the errors.

Owns: ``_models`` (the immutable dataclasses), ``_export`` (``to_wire`` and ``to_document``),
``_versions`` (group, kind, known API versions), ``_errors`` (the one exception hierarchy).
May import: the standard library only (pydantic_core lazily, inside the models' schema hook).
Nothing here reads a file, decodes bytes or knows about the layers above.
"""
