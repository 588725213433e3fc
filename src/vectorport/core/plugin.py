"""Plugins: the pluggy hook specifications, :class:`AdapterEntry` and the :class:`Registry`.

A plugin is a module (named in the ``vectorport`` entry-point group) or any object with
functions decorated by :data:`hookimpl`. Built-in adapters register exactly like
third-party ones, with one idiom::

    @vectorport.hookimpl
    def vectorport_register_adapters(register):
        register(vectorport.AdapterEntry(name="mydb", schemes=("mydb",), ...))

The entry names its adapter class as ``"module:Class"``, imported on first use, so that
``vectorport backends`` can list an adapter whose SDK is not installed and ``connect``
can say which extra to install. It also carries what other parts of the project need to
know about a backend (its SDK distributions for the matrix, its query-tool config keys,
its test launcher), so that nothing else keeps a list of backends.

Tracing, metrics or tenant policy plugins implement the operation hooks, which cost
nothing when no plugin implements them. A plugin that fails to load or to register is
recorded in :attr:`Registry.broken` with its name and skipped.

Hook specs and the registry live in one module on purpose: they used to import each
other (the spec names the entry type, the registry loads the specs).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import ConfigError

if TYPE_CHECKING:
    from vectorport.core.adapter import Adapter

log = logging.getLogger("vectorport.registry")
PROJECT = "vectorport"
ENTRY_POINT_GROUP = "vectorport"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

_NO_KEYS: Mapping[str, str] = MappingProxyType({})


# -- values ----------------------------------------------------------------------------


_TOP_K_OPERATIONS = frozenset({"query", "query_many"})


@dataclass(frozen=True, slots=True)
class OperationEvent:
    """One facade operation, as the operation hooks see it.

    ``top_k`` is set for ``query`` and ``query_many``; ``record_count`` is what the
    operation carries: records written (``upsert``), ids fetched or deleted, ids or
    records asked for (``list_ids``, ``scan`` page size), ``patch`` (1), the query
    vectors of a ``query_many`` batch. ``size`` is the older single number (top_k for
    ``query``, the batch for ``query_many``, else ``record_count``), kept for plugins
    written against it.
    """

    backend: str
    operation: str
    index: str | None = None
    namespace: str | None = None
    size: int | None = None
    top_k: int | None = None
    record_count: int | None = None

    @classmethod
    def of(cls, backend: str, operation: str, index: str | None, namespace: str | None,
           size: int | None, top_k: int | None = None) -> OperationEvent:
        """The event of one facade call: ``size`` as the facade passes it (top_k for a
        ``query``, the batch for ``query_many``, the records otherwise) and ``top_k``
        where the call knows it separately (``query_many``)."""
        if operation == "query" and top_k is None:
            return cls(backend, operation, index, namespace, size, size, None)
        record_count = size if operation != "query" else None
        return cls(backend, operation, index, namespace, size,
                   top_k if operation in _TOP_K_OPERATIONS else None, record_count)


@dataclass(frozen=True, slots=True)
class OperationOutcome:
    """What an operation came to, for the after-hook.

    ``attempts``: the calls made to the adapter (1 + the retries of transient failures;
    0 when a before hook refused it). ``result_count``: matches of ``query``, at most
    ``top_k`` (summed over a ``query_many`` batch), records found by ``fetch``, ids of a
    ``list_ids`` page, records of a ``scan`` page, the number ``count`` returned, 1/0
    for ``patch``; ``None`` where it means nothing (writes, lifecycle) or on failure.
    """

    attempts: int = 0
    result_count: int | None = None

    @property
    def retries(self) -> int:
        return max(self.attempts - 1, 0)


def result_count(value: object, top_k: int | None = None) -> int | None:
    """The :attr:`OperationOutcome.result_count` of an adapter call's return value.

    Query candidates are counted as the facade keeps them: at most ``top_k`` per query
    (an adapter may return more under ties; ``min_score`` is applied after this)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        cut = len if top_k is None else (lambda items: min(len(items), top_k))
        if value and all(isinstance(v, list) for v in value):
            return sum(cut(v) for v in value)  # query_many: one list per query
        return cut(value)
    for attr in ("ids", "records"):  # IdPage, RecordPage
        found = getattr(value, attr, None)
        if isinstance(found, tuple):
            return len(found)
    return None


@dataclass(frozen=True, slots=True)
class AdapterEntry:
    """An adapter as a plugin registers it, with what the project needs to know of it.

    - ``adapter``: the class, or ``"module:Class"`` to import on first use.
    - ``requires``: the importable modules the adapter needs; ``extra`` is the pip
      extra that installs them (``pip install ".[extra]"``).
    - ``sdk_distributions``: the distributions whose versions describe the engine in
      the capability matrix (the SDK, an embedded engine, a test server).
    - ``query_tool_keys``: the keys the query tool's ``database_config`` section of this
      backend accepts besides ``namespace`` and ``min_score``, each mapped to the generic
      query option it becomes (``"ef"``, ``"probes"``, ``"consistency"``, ``"sparse"``,
      ``"filter"``) or to ``"backend:<key>"`` (handed to the adapter in
      ``backend_options``). ``None``: not declared; the tool then accepts the generic
      names and passes every other key to the adapter.
    - ``test_launcher``: ``"module:function"`` of a context-manager factory
      ``(tmp_path) -> ContextManager[str]`` yielding a URL of a running, empty-enough
      store (starting and stopping what the backend needs); the project's test runs and
      nox sessions take their backends from it. ``None``: no local test store.
    """

    name: str
    schemes: tuple[str, ...]
    adapter: type[Adapter] | str
    capabilities: Capabilities
    summary: str = ""
    requires: tuple[str, ...] = ()
    extra: str | None = None
    sdk_distributions: tuple[str, ...] = ()
    query_tool_keys: Mapping[str, str] | None = field(default=None, hash=False)
    test_launcher: str | None = None
    plugin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # Frozen means frozen: a plugin may pass a plain dict, the entry keeps a read-only copy.
        if self.query_tool_keys is not None and not isinstance(self.query_tool_keys,
                                                                MappingProxyType):
            object.__setattr__(self, "query_tool_keys",
                               MappingProxyType(dict(self.query_tool_keys)))

    def missing_requirements(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    @property
    def installed(self) -> bool:
        return not self.missing_requirements()

    def load(self) -> type[Adapter]:
        missing = self.missing_requirements()
        if missing:
            from vectorport.extras import MissingExtraError, install_hint

            hint = install_hint(self.extra) if self.extra else "install them"
            raise MissingExtraError(
                f"backend {self.name!r} needs {', '.join(missing)}, which is not installed: "
                f"{hint}"
            )
        if not isinstance(self.adapter, str):
            return self.adapter
        cls: type[Adapter] = _import_attribute(self.adapter)
        return cls

    def load_test_launcher(self) -> Callable[..., object] | None:
        """The :attr:`test_launcher` function, imported (``None`` when there is none)."""
        if self.test_launcher is None:
            return None
        launcher: Callable[..., object] = _import_attribute(self.test_launcher)
        return launcher


def _import_attribute(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


# -- hook specifications ---------------------------------------------------------------


@hookspec
def vectorport_register_adapters(register: Callable[[AdapterEntry], None]) -> None:
    """Call ``register(AdapterEntry(...))`` once per adapter this plugin provides."""


@hookspec
def vectorport_before_operation(event: OperationEvent) -> None:
    """Called before each facade operation, sync or async; raising stops the operation
    before any I/O (a policy), and the caller gets that exception."""


@hookspec
def vectorport_after_operation(
    event: OperationEvent, error: BaseException | None, seconds: float,
    outcome: OperationOutcome,
) -> None:
    """Called after each facade operation, with the error if it failed or a before hook
    refused it, the seconds it took (retries included) and its :class:`OperationOutcome`
    (attempts made, result count). An implementation may take any subset of these
    arguments (pluggy passes only those it names), so older plugins keep working."""


# -- the registry ----------------------------------------------------------------------


class Registry:
    """The plugin manager and the adapters it found."""

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self.plugins = pluggy.PluginManager(PROJECT)
        self.plugins.add_hookspecs(sys.modules[__name__])
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
                    entries.setdefault(entry.name, replace(entry, plugin=impl.plugin_name))
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


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry, built on first use from the installed entry points."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT",
    "AdapterEntry",
    "OperationEvent",
    "OperationOutcome",
    "Registry",
    "default_registry",
    "hookimpl",
    "hookspec",
    "result_count",
]
