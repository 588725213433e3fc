"""Map the seed's ``database_config`` onto vectorport's generic query options.

``database_config`` holds one section per database, ``{"pinecone": {...},
"pgvector": {...}}``, so one tool configuration can serve several backends. At query
time only the section named like the store's backend (``store.backend``) is read; the
others are ignored. The active section is validated strictly: an unknown key is an
error, never silently dropped.

What each section may hold, and the generic option it becomes:

============  ==========================================================================
section       keys → ``Index.query`` option
============  ==========================================================================
every one     ``namespace`` → ``namespace=``; ``min_score`` → ``min_score=``
local         (only the two above)
pinecone      ``sparse_vector`` (``{"indices": [...], "values": [...]}``) → ``sparse=``
pgvector      ``ef`` → ``ef=``; ``probes`` → ``probes=``
chroma        ``where`` (a filter) → AND-ed into ``filter=``;
              ``where_document`` → ``backend_options={"chroma": {"where_document": ...}}``
turbopuffer   ``consistency`` (``"strong"`` / ``"eventual"``) → ``consistency=``
milvus        ``consistency`` → ``consistency=``; ``ef`` → ``ef=``; ``nprobe`` → ``probes=``
============  ==========================================================================

A backend not in this table (a third-party adapter) may use the generic names
(``namespace``, ``min_score``, ``ef``, ``probes``, ``consistency``, ``sparse_vector``,
``where``); every other key of its section is handed to the adapter in
``backend_options[backend]``, which the adapter validates strictly itself.

Keys are snake_case; the seed's camelCase spellings (``minScore``) are rejected with
the right name in the message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vectorport.core import validation
from vectorport.core.errors import ConfigError, FilterError, ValidationError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.parse import parse_filter
from vectorport.core.types import Consistency, SparseVector

_GENERIC: dict[str, str] = {"namespace": "namespace", "min_score": "min_score"}

SECTION_KEYS: Mapping[str, Mapping[str, str]] = {
    "local": {**_GENERIC},
    "pinecone": {**_GENERIC, "sparse_vector": "sparse"},
    "pgvector": {**_GENERIC, "ef": "ef", "probes": "probes"},
    "chroma": {**_GENERIC, "where": "filter", "where_document": "backend:where_document"},
    "turbopuffer": {**_GENERIC, "consistency": "consistency"},
    "milvus": {**_GENERIC, "consistency": "consistency", "ef": "ef", "nprobe": "probes"},
    "qdrant": {**_GENERIC, "consistency": "consistency", "ef": "ef", "hnsw_ef": "ef"},
}
"""For each known backend: the keys its section accepts, and the option each becomes."""

OTHER_BACKEND_KEYS: Mapping[str, str] = {
    **_GENERIC, "ef": "ef", "probes": "probes", "consistency": "consistency",
    "sparse_vector": "sparse", "where": "filter",
}
"""Generic keys understood in the section of a backend not in :data:`SECTION_KEYS`."""


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """The generic query options one ``database_config`` section amounts to.

    ``None`` means "not set here" (the tool's own default applies).
    """

    namespace: str | None = None
    min_score: float | None = None
    ef: int | None = None
    probes: int | None = None
    consistency: Consistency | None = None
    sparse: SparseVector | None = None
    filter: Filter | None = None
    backend_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def query_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``Index.query`` (unset ones left out)."""
        out: dict[str, Any] = {}
        for name in ("namespace", "min_score", "ef", "probes", "consistency"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.backend_options:
            out["backend_options"] = {k: dict(v) for k, v in self.backend_options.items()}
        return out


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def _positive_int(path: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{path} must be a positive int, got {value!r}")
    return value


def _convert(path: str, target: str, value: object) -> Any:
    """Check one value for the generic option it maps to."""
    if target == "namespace":
        if not isinstance(value, str):
            raise ConfigError(f"{path} must be a str, got {type(value).__name__}")
        try:
            return validation.namespace(value)
        except ValidationError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    if target == "min_score":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value
        ):
            raise ConfigError(f"{path} must be a finite number, got {value!r}")
        return float(value)
    if target in ("ef", "probes"):
        return _positive_int(path, value)
    if target == "consistency":
        if value not in ("strong", "eventual"):
            raise ConfigError(f"{path} must be 'strong' or 'eventual', got {value!r}")
        return value
    if target == "sparse":
        try:
            return validation.sparse_vector(value, path)
        except ValidationError as exc:
            raise ConfigError(str(exc)) from None
    if target == "filter":
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} must be a filter object, got {type(value).__name__}")
        try:
            return parse_filter(value)
        except FilterError as exc:
            raise FilterError(exc.reason, f"{path}.{exc.path}" if exc.path else path) from None
    # backend:<key> — handed to the adapter's own section
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{path} must be a non-empty object, got {value!r}")
    return dict(value)


def active_section(database_config: Mapping[str, Any] | None, backend: str
                   ) -> Mapping[str, Any] | None:
    """The section for ``backend``, or ``None``. A section whose name differs only in
    case (``"pgVector"``) is an error rather than a silently ignored typo."""
    if database_config is None:
        return None
    if not isinstance(database_config, Mapping):
        raise ConfigError(
            f"database_config must map a database name to its options, "
            f"got {type(database_config).__name__}"
        )
    if backend in database_config:
        section = database_config[backend]
        if not isinstance(section, Mapping):
            raise ConfigError(f"database_config.{backend} must be an object of options, "
                              f"got {type(section).__name__}")
        return section
    for name in database_config:
        if isinstance(name, str) and name.lower() == backend.lower():
            raise ConfigError(f"database_config section {name!r} is not a backend name; "
                              f"did you mean {backend!r}?")
    return None


def options_for_backend(database_config: Mapping[str, Any] | None, backend: str) -> QueryOptions:
    """The :class:`QueryOptions` that ``database_config`` gives a store of ``backend``."""
    section = active_section(database_config, backend)
    if not section:
        return QueryOptions()
    known = SECTION_KEYS.get(backend)
    allowed = known if known is not None else OTHER_BACKEND_KEYS
    values: dict[str, Any] = {}
    backend_own: dict[str, Any] = {}
    filters: list[Filter] = []
    for key, value in section.items():
        path = f"database_config.{backend}.{key}"
        target = allowed.get(key) if isinstance(key, str) else None
        if target is None:
            if known is None and isinstance(key, str):
                backend_own[key] = value  # a third-party adapter validates its own keys
                continue
            hint = ""
            if isinstance(key, str) and _snake(key) in allowed:
                hint = f"; did you mean {_snake(key)!r}?"
            raise ConfigError(
                f"unknown key {key!r} in database_config.{backend}{hint} "
                f"(known keys: {', '.join(sorted(allowed))})"
            )
        converted = _convert(path, target, value)
        if target.startswith("backend:"):
            backend_own[target.removeprefix("backend:")] = converted
        elif target == "filter":
            if converted is not None:
                filters.append(converted)
        else:
            values[target] = converted
    node: Filter | None = filters[0] if filters else None
    return QueryOptions(
        **values,
        filter=node,
        backend_options={backend: backend_own} if backend_own else {},
    )


def describe_sections() -> dict[str, list[str]]:
    """The accepted keys per known backend (for docs and error messages)."""
    return {name: sorted(keys) for name, keys in SECTION_KEYS.items()}
