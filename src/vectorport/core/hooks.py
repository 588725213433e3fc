"""Compatibility: the hook specifications now live in :mod:`vectorport.core.plugin`."""

from vectorport.core.plugin import (
    PROJECT,
    OperationEvent,
    hookimpl,
    hookspec,
    vectorport_after_operation,
    vectorport_before_operation,
    vectorport_register_adapters,
)

__all__ = [
    "PROJECT",
    "OperationEvent",
    "hookimpl",
    "hookspec",
    "vectorport_after_operation",
    "vectorport_before_operation",
    "vectorport_register_adapters",
]
