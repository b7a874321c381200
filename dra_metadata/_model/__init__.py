"""The bottom layer: the models, their wire form and document, the API versions, the errors.

Owns: ``_models`` (devices, and typed access to their attributes), ``_attributes`` (an
attribute's value and a device's map of them), ``_building`` (wire names, unchecked
constructors), ``_checks`` (the checks every model shares), ``_typed_reads`` (``type=`` of
``Device.attribute``), ``_semver`` (Version), ``_metadata`` (DeviceMetadata, its requests and
object metadata, its sources), ``_raw_json`` (kept JSON compared without recursion), ``_wire``
(the wire form Go's writer encodes), ``_export`` (``to_wire`` and ``to_document``),
``_versions`` (group, kind, known API versions), ``_conditions`` (what a wait's
condition may answer) and ``_errors`` (the one exception hierarchy).
May import: the standard library and orjson; pydantic_core only inside the models' schema hook.
Nothing here reads a file, decodes bytes or knows about the layers above.
"""
