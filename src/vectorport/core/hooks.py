"""The pluggy hook specifications of vectorport.

A plugin is a module (named in the ``vectorport`` entry-point group) or any object with
functions decorated by :data:`hookimpl`. Adapters register through
:func:`vectorport_register_adapters`; tracing, metrics or tenant policy plugins use the
operation hooks, which cost nothing when no plugin implements them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from vectorport.core.registry import AdapterEntry

PROJECT = "vectorport"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True, slots=True)
class OperationEvent:
    """One facade operation, as the operation hooks see it."""

    backend: str
    operation: str
    index: str | None = None
    namespace: str | None = None
    size: int | None = None
    """Records written, ids asked for, or top_k, depending on the operation."""


@hookspec
def vectorport_register_adapters(register: Callable[[AdapterEntry], None]) -> None:
    """Call ``register(AdapterEntry(...))`` once per adapter this plugin provides."""


@hookspec
def vectorport_before_operation(event: OperationEvent) -> None:
    """Called before each facade operation; raising stops the operation (policy)."""


@hookspec
def vectorport_after_operation(
    event: OperationEvent, error: BaseException | None, seconds: float
) -> None:
    """Called after each facade operation, with the error if it failed."""
