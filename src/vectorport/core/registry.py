"""Finding adapters: the ``vectorport`` entry-point group, through pluggy.

Built-in adapters are registered exactly like third-party ones. Each plugin module
implements ``vectorport_register_adapters`` and registers an :class:`AdapterEntry` whose
class is imported lazily, so that ``vectorport backends`` can list an adapter whose SDK
is not installed, and ``connect`` can say which extra to install. A plugin that fails to
load or to register is recorded in :attr:`Registry.broken` with its name and skipped.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING

import pluggy

from vectorport.core import hooks
from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import ConfigError

if TYPE_CHECKING:
    from vectorport.core.adapter import Adapter

log = logging.getLogger("vectorport.registry")
ENTRY_POINT_GROUP = "vectorport"


@dataclass(frozen=True, slots=True)
class AdapterEntry:
    """An adapter as a plugin registers it.

    ``adapter`` is the class, or ``"module:Class"`` to import on first use.
    ``requires`` lists the importable modules the adapter needs; ``extra`` is the pip
    extra that installs them (``vectorport[extra]``).
    """

    name: str
    schemes: tuple[str, ...]
    adapter: type[Adapter] | str
    capabilities: Capabilities
    summary: str = ""
    requires: tuple[str, ...] = ()
    extra: str | None = None
    plugin: str = field(default="", compare=False)

    def missing_requirements(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    @property
    def installed(self) -> bool:
        return not self.missing_requirements()

    def load(self) -> type[Adapter]:
        missing = self.missing_requirements()
        if missing:
            hint = f'pip install "vectorport[{self.extra}]"' if self.extra else "install them"
            raise ConfigError(
                f"backend {self.name!r} needs {', '.join(missing)}, which is not installed: "
                f"{hint}"
            )
        if not isinstance(self.adapter, str):
            return self.adapter
        module_name, _, attr = self.adapter.partition(":")
        cls: type[Adapter] = getattr(importlib.import_module(module_name), attr)
        return cls


class Registry:
    """The plugin manager and the adapters it found."""

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self.plugins = pluggy.PluginManager(hooks.PROJECT)
        self.plugins.add_hookspecs(hooks)
        self.broken: dict[str, str] = {}
        self._entries: dict[str, AdapterEntry] | None = None
        if load_entry_points:
            self._load_entry_points()
        # Looked up once: with no implementations, the facade skips the hooks entirely.
        self.before = self.plugins.hook.vectorport_before_operation
        self.after = self.plugins.hook.vectorport_after_operation

    def _load_entry_points(self) -> None:
        seen: set[str] = set()
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in seen:
                continue
            seen.add(ep.name)
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must not stop the others
                self._mark_broken(ep.name, exc)
                continue
            self.register_plugin(plugin, ep.name)

    def _mark_broken(self, name: str, exc: BaseException) -> None:
        self.broken[name] = f"{type(exc).__name__}: {exc}"
        log.warning("vectorport plugin %r failed to load and is skipped: %s", name, exc)

    def register_plugin(self, plugin: ModuleType | object, name: str | None = None) -> None:
        """Register a plugin module or object (for example from a test or an app)."""
        plugin_name = name or getattr(plugin, "__name__", None) or repr(plugin)
        try:
            self.plugins.register(plugin, name=plugin_name)
        except Exception as exc:
            self._mark_broken(plugin_name, exc)
        self._entries = None

    @property
    def entries(self) -> dict[str, AdapterEntry]:
        """Adapters by name, collected from every plugin (each plugin in isolation)."""
        if self._entries is None:
            entries: dict[str, AdapterEntry] = {}
            caller = self.plugins.hook.vectorport_register_adapters
            for impl in caller.get_hookimpls():
                collected: list[AdapterEntry] = []
                try:
                    impl.function(register=collected.append)
                except Exception as exc:
                    self._mark_broken(impl.plugin_name, exc)
                    continue
                for entry in collected:
                    entries.setdefault(
                        entry.name, _with_plugin(entry, impl.plugin_name)
                    )
            self._entries = entries
        return self._entries

    def by_scheme(self, scheme: str) -> AdapterEntry:
        for entry in self.entries.values():
            if scheme in entry.schemes:
                return entry
        known = ", ".join(
            f"{e.name} ({', '.join(s + '://' for s in e.schemes)})"
            for e in sorted(self.entries.values(), key=lambda e: e.name)
        )
        broken = f"; plugins that failed to load: {', '.join(self.broken)}" if self.broken else ""
        raise ConfigError(
            f"no backend handles {scheme}:// URLs. Installed backends: {known or 'none'}{broken}"
        )

    def has_operation_hooks(self) -> bool:
        return bool(self.before.get_hookimpls() or self.after.get_hookimpls())


def _with_plugin(entry: AdapterEntry, plugin: str) -> AdapterEntry:
    return replace(entry, plugin=plugin)


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry, built on first use from the installed entry points."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def register_adapter_function(
    entry_factory: Callable[[], AdapterEntry],
) -> Callable[[Callable[[AdapterEntry], None]], None]:
    """Build a ``vectorport_register_adapters`` hook for a plugin module in one line:

    ``vectorport_register_adapters = register_adapter_function(lambda: AdapterEntry(...))``
    """

    @hooks.hookimpl
    def vectorport_register_adapters(register: Callable[[AdapterEntry], None]) -> None:
        register(entry_factory())

    return vectorport_register_adapters


__all__ = ["AdapterEntry", "Registry", "default_registry", "register_adapter_function"]
