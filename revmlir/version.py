"""The version of revmlir that is running.

From the installed distribution's metadata; a source checkout that is
imported without being installed (``PYTHONPATH=.``, as on a machine that
only has the repository) has none, and reads as ``unversioned`` rather than
failing at import.
"""

from __future__ import annotations

import importlib.metadata

UNVERSIONED = "unversioned"


def revmlir_version() -> str:
    try:
        return importlib.metadata.version("revmlir")
    except importlib.metadata.PackageNotFoundError:
        return UNVERSIONED
