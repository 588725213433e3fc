"""Every backend with a test launcher, as URL launchers for the feature tests (query
tool, recall, workspace), so that those run everywhere too.

The list comes from the registry: each plugin entry names its launcher
(``AdapterEntry.test_launcher``, a context-manager factory giving a URL for a temporary
folder; the built-in ones are in :mod:`vectorport.testing.launchers`). ``memory`` is the
reference adapter's second, in-process form. ``VECTORPORT_TEST_<NAME>_URL`` overrides an
entry.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import vectorport
from vectorport import default_registry
from vectorport.testing.launchers import EMULATOR_KEY_ENV

__all__ = ["ALL", "EMBEDDED", "EMULATOR_KEY_ENV", "Backend", "open_backend"]

Launcher = Callable[[Path], AbstractContextManager[str]]


@dataclass(frozen=True)
class Backend:
    name: str
    open: Launcher


def _registered() -> list[Backend]:
    found = []
    for name, entry in sorted(default_registry().entries.items()):
        launcher = entry.load_test_launcher()
        if launcher is not None:
            found.append(Backend(name, cast(Launcher, launcher)))
    return found


_FROM_REGISTRY = _registered()
EMBEDDED: list[Backend] = [
    Backend("memory", lambda tmp: nullcontext("memory://")),
    *(b for b in _FROM_REGISTRY if b.name == "local"),
]
ALL: list[Backend] = [*EMBEDDED, *(b for b in _FROM_REGISTRY if b.name != "local")]


def open_backend(backend: Backend, tmp: Path) -> AbstractContextManager[str]:
    override = os.environ.get(f"VECTORPORT_TEST_{backend.name.upper()}_URL")
    return nullcontext(override) if override else backend.open(tmp)


@contextlib.contextmanager
def opened_store(backend: Backend, tmp: Path) -> Iterator[vectorport.Store]:
    """A store on ``backend`` (its engine started under ``tmp``), closed afterwards."""
    tmp.mkdir(parents=True, exist_ok=True)
    with open_backend(backend, tmp) as url, vectorport.connect(url) as store:
        yield store
