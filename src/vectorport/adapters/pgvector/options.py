"""Settings of the pgvector adapter: the connection URL, and the ``pgvector`` sections of
``backend_options`` at index creation and at query time. Each is validated strictly
(unknown key → error) before any I/O.

URL forms::

    pgvector://user[:password]@host[:port]/dbname?schema=app
    pgvector://user@/dbname?host=/run/postgresql           (Unix socket directory)

URL options: ``schema`` (default ``public``; created if missing), ``host`` (a host name,
or a socket directory, overriding the URL's), ``password_env`` (read the password
from this environment variable; ``PGPASSWORD`` is also honoured by libpq),
``sslmode``, ``sslrootcert``, ``connect_timeout`` (whole seconds; default: ``timeout``
rounded up, at least 2), ``application_name``, ``pool_min_size`` (1), ``pool_max_size``
(4), ``pool_timeout`` (seconds to wait for a pooled connection; default ``timeout``, and
never longer than what is left of the call's deadline), and the common ``timeout``
(seconds one call may take, retries included, default 30; CONTRACT §6).

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

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from vectorport.adapterkit import (
    ConfigError,
    ConnectionURL,
    IndexSpec,
    Option,
    OptionSpec,
    QueryRequest,
    UnsupportedFeatureError,
    ValidationError,
    matching,
    within,
)

BACKEND = "pgvector"
SCHEMA_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
"""Schema names: the metadata key rule, cut to PostgreSQL's 63-byte identifiers."""

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


URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("password", "credential"),
    Option("schema", default="public"),
    Option("host"),
    Option("sslmode"),
    Option("sslrootcert"),
    Option("connect_timeout"),
    Option("application_name"),
    Option("pool_min_size", "int", default=1),
    Option("pool_max_size", "int", default=4),
    Option("pool_timeout", "seconds", check=within(0, 3600)),  # default: the store's timeout
))

INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("vector_type", default="vector", choices=("vector", "halfvec")),
    Option("defer_index", "bool", default=False),
    Option("maintenance_work_mem", default="1GB",
           check=matching(_MEMORY_RE, "must look like '1GB', '512MB' or '65536kB'")),
    Option("max_parallel_maintenance_workers", "int", default=2, check=within(0, 1024)),
))

HNSW_PARAMS = OptionSpec(BACKEND, "index_params", (
    Option("m", "int", check=within(2, 100)),
    Option("ef_construction", "int", check=within(4, 1000)),
))

IVF_PARAMS = OptionSpec(BACKEND, "index_params", (
    Option("lists", "int", check=within(1, PROBES_MAX)),
))

QUERY_OPTIONS = OptionSpec(BACKEND, "query", (
    Option("iterative_scan", choices=("off", "strict_order", "relaxed_order")),
    Option("max_scan_tuples", "int", check=within(1, 2**31 - 1)),
    Option("max_probes", "int", check=within(1, PROBES_MAX)),
))


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

    options = URL_OPTIONS.url(url)
    dbname = url.path.lstrip("/")
    if "/" in dbname:
        raise ConfigError(f"the database name {dbname!r} must not contain '/'")
    password = url.credential("password")
    if password is None and url.password is not None:
        password = url.password
    params: dict[str, Any] = {
        "host": options.get("host") or url.host,
        "port": url.port,
        "dbname": dbname or None,
        "user": url.username,
        "password": password.reveal() if password else None,
    }
    for key in _LIBPQ_PASSTHROUGH:
        params[key] = options.get(key)
    timeout = url.timeout()
    if params["connect_timeout"] is None:
        # libpq counts whole seconds and treats anything under 2 as 2; without it a
        # server that accepts and never answers holds connect() for minutes.
        params["connect_timeout"] = str(max(2, math.ceil(timeout)))
    min_size, max_size = options["pool_min_size"], options["pool_max_size"]
    if not 0 <= min_size <= max_size or max_size < 1:
        raise ConfigError("pool sizes need 0 <= pool_min_size <= pool_max_size, max >= 1")
    try:
        conninfo = make_conninfo("", **{k: v for k, v in params.items() if v is not None})
    except Exception as exc:  # psycopg.ProgrammingError on a bad option value
        raise ConfigError(f"bad connection URL {url.redacted()}: {exc}") from None
    return ConnectionSettings(
        conninfo=conninfo,
        schema=validate_schema(options["schema"]),
        pool_min_size=min_size,
        pool_max_size=max_size,
        pool_timeout=options.get("pool_timeout") or timeout,
        display=url.redacted(),
    )


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


_LAYOUTS: dict[int, tuple[IndexSpec, IndexLayout]] = {}
_LAYOUTS_MAX = 256


def index_layout(spec: IndexSpec) -> IndexLayout:
    """Validate the spec's pgvector-specific parts; raise before any I/O.

    Remembered per spec object (an index handle passes the same one on every call):
    parsing its options again was half of a query's statement building. The entry holds
    the spec, so its ``id`` cannot be reused by another object while it is cached."""
    hit = _LAYOUTS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    layout = _index_layout(spec)
    if len(_LAYOUTS) >= _LAYOUTS_MAX:
        _LAYOUTS.clear()
    _LAYOUTS[id(spec)] = (spec, layout)
    return layout


def _index_layout(spec: IndexSpec) -> IndexLayout:
    options = INDEX_OPTIONS.index(spec)
    vector_type: VectorType = options["vector_type"]
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
        defer_index=options["defer_index"],
        maintenance_work_mem=options["maintenance_work_mem"],
        maintenance_workers=options["max_parallel_maintenance_workers"],
    )


def _ann_params(kind: AnnKind, spec: IndexSpec) -> tuple[tuple[str, int], ...]:
    given = dict(spec.index_params)
    if kind == "hnsw":
        params = HNSW_PARAMS.parse(given)
        m = params.get("m", HNSW_DEFAULTS["m"])
        ef = params.get("ef_construction", max(HNSW_DEFAULTS["ef_construction"], 2 * m))
        if ef < 2 * m:
            raise ValidationError("hnsw ef_construction must be at least 2 * m")
        return (("m", m), ("ef_construction", ef))
    if kind == "ivf":
        lists = IVF_PARAMS.parse(given).get("lists")
        return () if lists is None else (("lists", lists),)
    if given:
        raise ValidationError(f"index_params {sorted(given)} need an ANN index, not 'flat'")
    return ()


def default_ivf_lists(rows: int) -> int:
    """pgvector's advice: rows / 1000 up to 1M rows, sqrt(rows) beyond."""
    if rows <= 1_000_000:
        return max(1, rows // 1000)
    return min(PROBES_MAX, int(rows**0.5))


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """``SET LOCAL`` values for one query's transaction, as (name, value) pairs."""

    settings: tuple[tuple[str, str], ...]


_NO_SETTINGS = SearchSettings(())


def search_settings(layout: IndexLayout, request: QueryRequest) -> SearchSettings:
    if request.ef is None and request.probes is None and BACKEND not in request.backend_options:
        return _NO_SETTINGS  # the common query: nothing to parse or set
    section = QUERY_OPTIONS.query(request)
    out: list[tuple[str, str]] = []
    if request.ef is not None:
        # below top_k, HNSW would return fewer rows than asked: a hint must not do that
        out.append(("hnsw.ef_search", str(min(max(request.ef, request.top_k), EF_SEARCH_MAX))))
    if request.probes is not None:
        out.append(("ivfflat.probes", str(min(request.probes, PROBES_MAX))))
    scan = section.get("iterative_scan")
    if scan is not None:
        if scan == "strict_order" and layout.ann == "ivf":
            raise UnsupportedFeatureError(BACKEND, "iterative_scan 'strict_order' on IVFFlat")
        out.append(("hnsw.iterative_scan", scan))
        out.append(("ivfflat.iterative_scan", "off" if scan == "off" else "relaxed_order"))
    tuples = section.get("max_scan_tuples")
    if tuples is not None:
        out.append(("hnsw.max_scan_tuples", str(tuples)))
    probes = section.get("max_probes")
    if probes is not None:
        out.append(("ivfflat.max_probes", str(probes)))
    return SearchSettings(tuple(out))


SESSION_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("hnsw.iterative_scan", "strict_order"),
    ("ivfflat.iterative_scan", "relaxed_order"),
)
"""Set once per pooled connection: filtered ANN queries keep scanning until top_k."""

CLIENT_CHECK: tuple[str, str] = ("client_connection_check_interval", "200ms")
"""Set once per pooled connection where the server has it (PostgreSQL 14 and later, on
the systems it supports it on): while a statement runs, the server checks this often
whether its client is still there, and ends the statement when not. A call whose
deadline passes has its socket shut down (:mod:`.watchdog`); without the check the
server found out only when it next wrote to the socket, so the statement ran to its
end for nobody, holding its locks: the two 5,000-row inserts of an upsert into an HNSW
index ended on the server 23 s after the call's 0.5 s deadline had returned it, and a
retry of the same records waited behind them."""
