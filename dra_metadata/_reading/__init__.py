"""Reading: from names to paths to files to merged, decoded metadata.

Owns: ``_paths`` (the root and the file layout of claims, requests and drivers), ``_read``
(one bounded read per file, decoding and merging per request), ``_select`` (which requests a
reader returns), ``_missing`` (what a not-found error says exists) and ``_listing`` (what is
mounted).
May import: ``_model``, ``_decoding``, ``_validation``. Never inotify, never ``kube``.
"""
