"""The local URL options, declared as the adapter kit's option specs.

``local:///path?busy_timeout=SECONDS``: how long a write waits for another process's
write lock on the SQLite file before a ``TransientBackendError`` (0 to 3600, default
5). ``memory://`` takes no options. The local adapter takes no index or query options.
"""

from __future__ import annotations

from vectorport.adapterkit import ConnectionURL, Option, OptionSpec, within
from vectorport.adapters.local.storage import DEFAULT_BUSY_TIMEOUT

BACKEND = "local"

FILE_URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("busy_timeout", "float", default=DEFAULT_BUSY_TIMEOUT, check=within(0, 3600)),
))
MEMORY_URL_OPTIONS = OptionSpec(BACKEND, "URL")


def busy_timeout(url: ConnectionURL) -> float:
    """The checked ``busy_timeout`` of a ``local://`` URL, in seconds."""
    seconds: float = FILE_URL_OPTIONS.url(url)["busy_timeout"]
    return seconds


__all__ = ["FILE_URL_OPTIONS", "MEMORY_URL_OPTIONS", "busy_timeout"]
