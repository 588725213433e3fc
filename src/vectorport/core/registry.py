"""Compatibility: the registry now lives in :mod:`vectorport.core.plugin`."""

from vectorport.core.plugin import ENTRY_POINT_GROUP, AdapterEntry, Registry, default_registry

__all__ = ["ENTRY_POINT_GROUP", "AdapterEntry", "Registry", "default_registry"]
