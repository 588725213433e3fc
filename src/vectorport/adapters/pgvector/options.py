"""Settings of the pgvector adapter: the connection URL, and the ``pgvector`` sections of
``backend_options`` at index creation and at query time. Each is validated strictly
(unknown key → error) before any I/O.

URL forms::

    pgvector://user[:password]@host[:port]/dbname?schema=app
    pgvector://user@/dbname?host=/run/postgresql           (Unix socket directory)

URL options: ``schema`` (default ``public``; created if missing), ``host`` (a host name,
or a socket directory, overriding the URL's), ``password_env`` (read the password
from this environment variable; ``PGPASSWORD`` is also honoured by libpq),
``sslmode``, ``sslrootcert``, ``connect_timeout``, ``application_name``,
``pool_min_size`` (1), ``pool_max_size`` (4), ``pool_timeout`` (seconds to wait for a
connection, 30).

Creation options (``backend_options={"pgvector": {...}}``):

- ``vector_type``: ``"vector"`` (float32, default) or ``"halfvec"`` (float16: half the
  space, ANN up to 4,000 dimensions instead of 2,000).
- ``defer_index``: ``True`` to create the table without its ANN index; load the data,
  then call ``adapter.build_index(name)`` (much faster for bulk loads, and IVFFlat needs
  data to place its lists).
- ``maintenance_work_mem`` (default ``"1GB"``) and ``max_parallel_maintenance_workers``
  (default 2): set with ``SET LOCAL`` for the transaction that builds the ANN index.

Query options (``backend_options={"pgvector": {...}}``):

- ``iterative_scan``: ``"strict_order"`` (HNSW default), ``"relaxed_order"`` (IVFFlat
  default; also valid for HNSW) or ``"off"``. With a scan on, a selective filter still
  gets ``top_k`` rows out of the ANN index. IVFFlat cannot scan in strict order.
- ``max_scan_tuples`` (HNSW) and ``max_probes`` (IVFFlat): bounds of an iterative scan.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vectorport.core.config import ConnectionURL
from vectorport.core.errors import ConfigError, UnsupportedFeatureError, ValidationError
from vectorport.core.types import IndexSpec, QueryRequest

BACKEND = "pgvector"
SCHEMA_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
"""Schema names: the metadata key rule, cut to PostgreSQL's 63-byte identifiers."""

URL_OPTIONS = frozenset({
    "schema", "host", "password_env", "sslmode", "sslrootcert", "connect_timeout",
    "application_name", "pool_min_size", "pool_max_size", "pool_timeout",
})
_LIBPQ_PASSTHROUGH = ("sslmode", "sslrootcert", "connect_timeout", "application_name")

VectorType = Literal["vector", "halfvec"]
AnnKind = Literal["hnsw", "ivf", "flat"]
IterativeScan = Literal["off", "strict_order", "relaxed_order"]

ANN_MAX_DIMENSIONS: dict[str, int] = {"vector": 2000, "halfvec": 4000}
HNSW_DEFAULTS = {"m": 16, "ef_construction": 64}
IVF_DEFAULT_LISTS = 100
EF_SEARCH_MAX = 1000
PROBES_MAX = 32768
_MEMORY_RE = re.compile(r"^[1-9][0-9]{0,9}\s*(kB|MB|GB|TB)?$")


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """What the URL says, with the password kept out of every repr."""

    conninfo: str
    schema: str
    pool_min_size: int
    pool_max_size: int
    display: str
    pool_timeout: float = 30.0

    def __repr__(self) -> str:
        return f"ConnectionSettings({self.display!r}, schema={self.schema!r})"


def validate_schema(name: str) -> str:
    """The URL's schema: composed with ``sql.Identifier`` anyway, but held to a safe
    shape, and kept out of PostgreSQL's reserved ``pg_`` names."""
    if not SCHEMA_RE.match(name) or name.lower().startswith("pg_"):
        raise ConfigError(
            f"invalid schema name {name!r}: use 1 to 63 characters of A-Z, a-z, 0-9 and _, "
            "not starting with a digit or pg_"
        )
    return name


def connection_settings(url: ConnectionURL) -> ConnectionSettings:
    from psycopg.conninfo import make_conninfo

    url.unknown_options(URL_OPTIONS | {"password"})
    dbname = url.path.lstrip("/")
    if "/" in dbname:
        raise ConfigError(f"the database name {dbname!r} must not contain '/'")
    password = url.credential("password")
    if password is None and url.password is not None:
        password = url.password
    params: dict[str, Any] = {
        "host": url.option("host") or url.host,
        "port": url.port,
        "dbname": dbname or None,
        "user": url.username,
        "password": password.reveal() if password else None,
    }
    for key in _LIBPQ_PASSTHROUGH:
        params[key] = url.option(key)
    min_size = url.int_option("pool_min_size", 1)
    max_size = url.int_option("pool_max_size", 4)
    if not 0 <= min_size <= max_size or max_size < 1:
        raise ConfigError("pool sizes need 0 <= pool_min_size <= pool_max_size, max >= 1")
    try:
        conninfo = make_conninfo("", **{k: v for k, v in params.items() if v is not None})
    except Exception as exc:  # psycopg.ProgrammingError on a bad option value
        raise ConfigError(f"bad connection URL {url.redacted()}: {exc}") from None
    return ConnectionSettings(
        conninfo=conninfo,
        schema=validate_schema(url.option("schema", "public") or ""),
        pool_min_size=min_size,
        pool_max_size=max_size,
        pool_timeout=_pool_timeout(url),
        display=url.redacted(),
    )


def _section(options: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
    section = options.get(BACKEND, {})
    if not isinstance(section, Mapping):
        raise ValidationError(f"backend_options[{BACKEND!r}] must be a dict")
    return section


def _unknown(section: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    extra = set(section) - known
    if extra:
        raise ValidationError(
            f"unknown {BACKEND} {where} option(s) {', '.join(sorted(map(str, extra)))}; "
            f"known: {', '.join(sorted(known))}"
        )


def _positive_int(section: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(f"{BACKEND} option {key!r} must be an int in [{low}, {high}]")
    return value


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """How one index is laid out in PostgreSQL, derived from its :class:`IndexSpec`."""

    name: str
    dimension: int
    metric: str
    vector_type: VectorType
    ann: AnnKind
    ann_params: tuple[tuple[str, int], ...]
    defer_index: bool
    maintenance_work_mem: str
    maintenance_workers: int

    @property
    def params(self) -> dict[str, int]:
        return dict(self.ann_params)


CREATE_OPTIONS = frozenset({
    "vector_type", "defer_index", "maintenance_work_mem", "max_parallel_maintenance_workers",
})


def index_layout(spec: IndexSpec) -> IndexLayout:
    """Validate the spec's pgvector-specific parts; raise before any I/O."""
    section = _section(spec.backend_options)
    _unknown(section, CREATE_OPTIONS, "index")
    vector_type = section.get("vector_type", "vector")
    if vector_type not in ("vector", "halfvec"):
        raise ValidationError(f"{BACKEND} vector_type must be 'vector' or 'halfvec'")
    defer = section.get("defer_index", False)
    if not isinstance(defer, bool):
        raise ValidationError(f"{BACKEND} defer_index must be true or false")
    memory = section.get("maintenance_work_mem", "1GB")
    if not isinstance(memory, str) or not _MEMORY_RE.match(memory):
        raise ValidationError(
            f"{BACKEND} maintenance_work_mem must look like '1GB', '512MB' or '65536kB'"
        )
    workers = _positive_int(section, "max_parallel_maintenance_workers", 0, 1024)
    ann_limit = ANN_MAX_DIMENSIONS[vector_type]
    kind: AnnKind
    if spec.index_type == "auto":
        kind = "hnsw" if spec.dimension <= ann_limit else "flat"
    else:
        kind = spec.index_type
    if kind != "flat" and spec.dimension > ann_limit:
        raise UnsupportedFeatureError(
            BACKEND, f"{kind} indexes over more than {ann_limit} dimensions of {vector_type}",
            "use vector_type 'halfvec' (4000) or index_type 'flat' (exact search)",
        )
    return IndexLayout(
        name=spec.name,
        dimension=spec.dimension,
        metric=spec.metric,
        vector_type=vector_type,
        ann=kind,
        ann_params=_ann_params(kind, spec),
        defer_index=defer,
        maintenance_work_mem=memory,
        maintenance_workers=2 if workers is None else workers,
    )


def _ann_params(kind: AnnKind, spec: IndexSpec) -> tuple[tuple[str, int], ...]:
    given = dict(spec.index_params)
    if kind == "hnsw":
        _unknown(given, frozenset(HNSW_DEFAULTS), "hnsw index_params")
        m = _positive_int(given, "m", 2, 100) or HNSW_DEFAULTS["m"]
        ef = _positive_int(given, "ef_construction", 4, 1000) or max(
            HNSW_DEFAULTS["ef_construction"], 2 * m
        )
        if ef < 2 * m:
            raise ValidationError("hnsw ef_construction must be at least 2 * m")
        return (("m", m), ("ef_construction", ef))
    if kind == "ivf":
        _unknown(given, frozenset({"lists"}), "ivf index_params")
        lists = _positive_int(given, "lists", 1, PROBES_MAX)
        return () if lists is None else (("lists", lists),)
    if given:
        raise ValidationError(f"index_params {sorted(given)} need an ANN index, not 'flat'")
    return ()


def default_ivf_lists(rows: int) -> int:
    """pgvector's advice: rows / 1000 up to 1M rows, sqrt(rows) beyond."""
    if rows <= 1_000_000:
        return max(1, rows // 1000)
    return min(PROBES_MAX, int(rows**0.5))


QUERY_OPTIONS = frozenset({"iterative_scan", "max_scan_tuples", "max_probes"})


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """``SET LOCAL`` values for one query's transaction, as (name, value) pairs."""

    settings: tuple[tuple[str, str], ...]


def search_settings(layout: IndexLayout, request: QueryRequest) -> SearchSettings:
    section = _section(request.backend_options)
    _unknown(section, QUERY_OPTIONS, "query")
    out: list[tuple[str, str]] = []
    if request.ef is not None:
        # below top_k, HNSW would return fewer rows than asked: a hint must not do that
        out.append(("hnsw.ef_search", str(min(max(request.ef, request.top_k), EF_SEARCH_MAX))))
    if request.probes is not None:
        out.append(("ivfflat.probes", str(min(request.probes, PROBES_MAX))))
    scan = section.get("iterative_scan")
    if scan is not None:
        if scan not in ("off", "strict_order", "relaxed_order"):
            raise ValidationError(
                f"{BACKEND} iterative_scan must be 'off', 'strict_order' or 'relaxed_order'"
            )
        if scan == "strict_order" and layout.ann == "ivf":
            raise UnsupportedFeatureError(BACKEND, "iterative_scan 'strict_order' on IVFFlat")
        out.append(("hnsw.iterative_scan", scan))
        out.append(("ivfflat.iterative_scan", "off" if scan == "off" else "relaxed_order"))
    tuples = _positive_int(section, "max_scan_tuples", 1, 2**31 - 1)
    if tuples is not None:
        out.append(("hnsw.max_scan_tuples", str(tuples)))
    probes = _positive_int(section, "max_probes", 1, PROBES_MAX)
    if probes is not None:
        out.append(("ivfflat.max_probes", str(probes)))
    return SearchSettings(tuple(out))


SESSION_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("hnsw.iterative_scan", "strict_order"),
    ("ivfflat.iterative_scan", "relaxed_order"),
)
"""Set once per pooled connection: filtered ANN queries keep scanning until top_k."""


def _pool_timeout(url: ConnectionURL) -> float:
    raw = url.option("pool_timeout")
    try:
        seconds = 30.0 if raw is None else float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 3600:
        raise ConfigError(f"pool_timeout={raw!r} must be a number of seconds in (0, 3600)")
    return seconds
