"""Decoding: the bytes of a metadata stream into the models.

Owns: ``_decode`` (splitting a stream into objects, picking the first known apiVersion, both
paths behind one call), the fast path ``_convert`` with its compiled attribute check
``_speedups`` (C, with a Python twin), and the exact Go-semantics path ``_unmarshal`` over the
Go JSON parser ``_gojson`` and Go's RFC 3339 times ``_gotime``.
May import: ``_model`` and ``_validation`` (the latter only when a caller asks to validate).
Knows nothing about files, paths or watching.
"""
