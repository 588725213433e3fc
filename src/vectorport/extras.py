"""Optional dependencies: how to install an extra, and a clear error when one is missing.

vectorport is installed from a checkout (``pip install ".[pgvector]"``) until it is on
the package index, where the same extra is ``pip install "vectorport[pgvector]"``. Every
"install this" hint in the package comes from :func:`install_hint`, so the advice a user
reads is the command that works for the way the package is distributed today.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

from vectorport.core.errors import ConfigError


class MissingExtraError(ConfigError, ImportError):
    """An optional dependency is not installed. It is an :class:`ImportError` too, so that
    code which probes for an optional module with ``except ImportError`` still works."""


def install_hint(*extras: str) -> str:
    """The pip command that installs ``extras``: the checkout form, which works today,
    then the published form."""
    names = ",".join(extras)
    return (f'pip install ".[{names}]" from a vectorport checkout '
            f'(once published: pip install "vectorport[{names}]")')


def missing_modules(modules: Iterable[str]) -> list[str]:
    return [name for name in modules if not _importable(name)]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a module set to None
        return False


def require_extra(extra: str, modules: Iterable[str], *, needed_by: str) -> None:
    """Raise :class:`MissingExtraError` naming ``extra`` when any of ``modules`` is not
    importable (instead of a bare ``ModuleNotFoundError`` from deep inside)."""
    missing = missing_modules(modules)
    if missing:
        raise MissingExtraError(
            f"{needed_by} needs {', '.join(missing)}, "
            f"{'which is' if len(missing) == 1 else 'which are'} not installed: "
            f"{install_hint(extra)}")


TESTING_MODULES = ("pytest", "hypothesis")
"""What the conformance suite, the capability matrix and the vendor-test runner import."""


def require_testing(needed_by: str) -> None:
    require_extra("testing", TESTING_MODULES, needed_by=needed_by)


__all__ = ["MissingExtraError", "install_hint", "missing_modules", "require_extra",
           "require_testing"]
