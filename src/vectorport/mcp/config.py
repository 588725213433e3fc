"""What one MCP server serves, and the tenant scope it enforces.

The scope is the operator's, never the client's: a fixed namespace and a fixed filter,
from flags or from a ``[mcp]`` table of a TOML config file. Both can only narrow what a
client sees — the filter is AND-ed under every query (it is the query tool's enforced
request-context filter), the namespace is the query tool's tenant namespace — and when a
config file and a flag both give one, the result is the narrower of the two (filters
AND-ed; two different namespaces are an error rather than a silent choice).

Config file::

    [mcp]
    url = "pgvector://localhost/app"
    indexes = ["docs"]
    namespace = "acme"
    filter = { tenant = "acme" }
    embedder = "hashing"
    top_k = 5
    max_top_k = 50
    workspace = "/srv/notes"

    [mcp.database_config.pgvector]
    ef = 100
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vectorport.agent.database_config import options_for_backend
from vectorport.core import validation
from vectorport.core.errors import ConfigError, FilterError, ValidationError
from vectorport.core.filters.ast import And, Filter, fields_used
from vectorport.core.filters.parse import parse_filter, render_filter

_KEYS = frozenset({"url", "indexes", "namespace", "filter", "embedder", "top_k", "max_top_k",
                   "workspace", "database_config", "name"})


@dataclass(frozen=True, slots=True)
class Scope:
    """The part of the data one server may show: a namespace and a filter (``None``:
    no filter). Combining scopes only ever narrows."""

    namespace: str = ""
    filter: Filter | None = None

    def narrowed(self, other: Scope) -> Scope:
        if self.namespace and other.namespace and self.namespace != other.namespace:
            raise ConfigError(f"two namespaces for one server ({self.namespace!r} and "
                              f"{other.namespace!r}): a server serves one tenant namespace")
        parts = [f for f in (self.filter, other.filter) if f is not None]
        node = None if not parts else parts[0] if len(parts) == 1 else And(tuple(parts))
        return Scope(self.namespace or other.namespace, node)

    def describe(self) -> str:
        """For logs: the filter's fields, never its values."""
        fields = sorted(fields_used(self.filter)) if self.filter is not None else []
        return f"namespace={'set' if self.namespace else 'default'}, filter on {fields or 'nothing'}"


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``vectorport mcp`` needs; see the module docstring."""

    url: str
    indexes: tuple[str, ...]
    embedder: str = "hashing"
    scope: Scope = field(default_factory=Scope)
    top_k: int = 10
    max_top_k: int = 100
    workspace: str | None = None
    database_config: Mapping[str, Any] | None = None
    name: str = "vectorport"

    def __repr__(self) -> str:  # the URL may carry a password: show the scheme only
        scheme = self.url.partition("://")[0]
        return (f"ServerConfig(url={scheme + '://…'!r}, indexes={self.indexes!r}, "
                f"embedder={self.embedder!r}, scope=({self.scope.describe()}))")


def parse_scope_filter(raw: object, source: str) -> Filter | None:
    """A filter from a flag (JSON text) or a config file (a table)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source} is not valid JSON: {exc.msg}") from None
    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError(f"{source} must be a filter object, got {type(raw).__name__}")
    try:
        node = parse_filter(raw)
    except FilterError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if raw and node is None:
        raise ConfigError(f"{source} is empty: it would not narrow anything")
    return node


def parse_namespace(raw: object, source: str) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{source} must be a str, got {type(raw).__name__}")
    try:
        return validation.namespace(raw)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _positive(raw: object, source: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ConfigError(f"{source} must be a positive int, got {raw!r}")
    return raw


def read_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``[mcp]`` table of a TOML file (or the whole file when it has none)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {exc}") from exc
    table = data.get("mcp", data)
    if not isinstance(table, dict):
        raise ConfigError(f"config file {os.fspath(path)!r}: [mcp] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"config file {os.fspath(path)!r}: unknown key(s) {unknown} "
                          f"(known: {', '.join(sorted(_KEYS))})")
    return table


def from_file(table: Mapping[str, Any], source: str) -> ServerConfig:
    """A :class:`ServerConfig` from a config table (``url`` may come from a flag later)."""
    indexes = table.get("indexes", [])
    if isinstance(indexes, str):
        indexes = [indexes]
    if not isinstance(indexes, list) or not all(isinstance(i, str) and i for i in indexes):
        raise ConfigError(f"{source}: indexes must be a list of index names")
    url = table.get("url", "")
    if not isinstance(url, str):
        raise ConfigError(f"{source}: url must be a str")
    database_config = table.get("database_config")
    if database_config is not None and not isinstance(database_config, Mapping):
        raise ConfigError(f"{source}: database_config must be a table of backend sections")
    scope = Scope(parse_namespace(table.get("namespace", ""), f"{source}: namespace"),
                  parse_scope_filter(table.get("filter"), f"{source}: filter"))
    config = ServerConfig(url=url, indexes=tuple(indexes), scope=scope,
                          database_config=database_config)
    updates: dict[str, Any] = {key: _positive(table[key], f"{source}: {key}")
                               for key in ("top_k", "max_top_k") if key in table}
    config = replace(config, **updates)
    for key in ("embedder", "workspace", "name"):
        if key in table:
            if not isinstance(table[key], str) or not table[key]:
                raise ConfigError(f"{source}: {key} must be a non-empty str")
            config = replace(config, **{key: table[key]})
    return config


def check(config: ServerConfig, backend: str) -> None:
    """Fail at startup, not at the first call: a scope filter must be expressible (it
    is checked again by the store on each query), and the server's ``database_config``
    must be valid for the store's backend and leave the namespace to the scope."""
    options = options_for_backend(config.database_config, backend)
    if options.namespace is not None:
        # One place for the namespace, so that the query tool, navigation and the
        # workspace all read the same one.
        raise ConfigError(f"database_config.{backend}.namespace: give the server's namespace "
                          "with --namespace (or namespace = in the config file)")
    if config.top_k > config.max_top_k:
        raise ConfigError(f"top_k ({config.top_k}) cannot exceed max_top_k ({config.max_top_k})")
    if config.scope.filter is not None:
        render_filter(config.scope.filter)
