"""Writing: the file-system half of the writer.

Owns: ``_write`` (safe writes: a temporary file renamed into place or a rewrite in place, file
modes, the directory lock). The encoding of streams is ``dra_metadata.writer``'s, the wire form
of a model ``_model``'s.
May import: ``_model`` and ``_reading`` (the names and paths of the file layout).
"""
