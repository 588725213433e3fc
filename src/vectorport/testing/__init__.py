"""Launchers for real local backends, and wire emulators of hosted services.

These are product, not test scaffolding: users can start the same servers for their own
application tests. Every launcher honours ``VECTORPORT_TEST_<BACKEND>_URL`` first, so the
same tests run against a server (or real service) you already have.
"""

from __future__ import annotations

import os


def url_from_env(backend: str) -> str | None:
    """``VECTORPORT_TEST_<BACKEND>_URL`` if set: use that server instead of starting one."""
    return os.environ.get(f"VECTORPORT_TEST_{backend.upper()}_URL") or None
