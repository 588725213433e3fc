"""The ``milvus`` adapter: pymilvus' ``MilvusClient`` against milvus-lite or a server.

URLs: ``milvus:///path/file.db`` opens a milvus-lite database in process (a path not
ending in ``.db`` is a folder holding ``vectorport.db``); ``milvus://host:port`` and
``milvus+https://host:port`` reach a Milvus server (port 19530 by default). Options:
``token_env=VAR`` (or ``user:password@`` in the URL) for authentication, ``db_name``,
``timeout`` (seconds). The token is held as a masked :class:`Secret`.

**Indexes** are collections of the same name; the collection layout is described in
:mod:`.layout`, and the IndexSpec is kept in a collection property.

**Namespaces** are the values of the partition-key field ``ns``: Milvus hashes them
into the collection's partitions. Every query, count, fetch, delete and listing carries
``ns == "<namespace>"`` in its expression, and primary keys are ``namespace/id``, so
that the same id can live in several namespaces and a fetch or delete by id can only
reach its own namespace. Nothing is ever partition-scoped: milvus-lite 3 deletes rows
of every partition when ``delete`` is given a ``partition_name``. ``list_namespaces``
walks the namespaces in primary-key order, one ordered query per namespace.

**Scores** are computed by the adapter from the vectors the search returns
(:mod:`.ranking`): exact for every metric, ties at the cut resolved by id, and hybrid
queries scored as ``dense + sparse`` with a proven bound.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.capabilities import MILVUS_CAPABILITIES, MILVUS_MAX_TOP_K
from vectorport.adapters.milvus.collection import (
    MILVUS_METRICS,
    SPEC_PROPERTY,
    build_index_params,
    build_schema,
    creation_options,
    spec_from_json,
    spec_to_json,
)
from vectorport.adapters.milvus.errors import is_not_found, is_not_loaded, translated
from vectorport.adapters.milvus.escaping import quote_string
from vectorport.adapters.milvus.filters import namespace_expression, pk_in, scoped
from vectorport.adapters.milvus.ranking import Row, Scorer, exact_top_k
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL, Secret
from vectorport.core.errors import (
    ConfigError,
    IndexExistsError,
    IndexNotFoundError,
    ValidationError,
)
from vectorport.core.filters.ast import Filter
from vectorport.core.types import (
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    SparseVector,
)

BACKEND = "milvus"
DEFAULT_PORT = 19530
LITE_FILENAME = "vectorport.db"
_URL_OPTIONS = frozenset({"token", "token_env", "db_name", "timeout"})
_QUERY_OPTIONS: frozenset[str] = frozenset()
_CONSISTENCY = {"strong": "Strong", "eventual": "Eventually"}
_PK_CHUNK = 1_000
_SCAN_BATCH = 4_096


def _successor(text: str) -> str | None:
    """The smallest string greater than every string starting with ``text``."""
    chars = list(text)
    while chars:
        code = ord(chars[-1])
        if code < 0x10FFFF:
            code += 1
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


def _read_only(values: Sequence[float]) -> np.ndarray[Any, np.dtype[np.float32]]:
    array = np.asarray(values, dtype=np.float32)
    array.setflags(write=False)
    return array


class MilvusAdapter:
    """Milvus through ``MilvusClient``; see the module docstring for the mapping."""

    backend: ClassVar[str] = BACKEND

    def __init__(self, uri: str, *, token: Secret | None = None, db_name: str | None = None,
                 timeout: float | None = None, shown_as: str = "") -> None:
        from pymilvus import MilvusClient

        self._shown_as = shown_as or uri
        self._timeout = timeout
        kwargs: dict[str, Any] = {"uri": uri}
        if token is not None:
            kwargs["token"] = token.reveal()
        if db_name:
            kwargs["db_name"] = db_name
        if timeout is not None:
            kwargs["timeout"] = timeout
        with translated("connect"):
            self._client = MilvusClient(**kwargs)

    @classmethod
    def from_url(cls, url: ConnectionURL) -> MilvusAdapter:
        url.unknown_options(_URL_OPTIONS)
        timeout: float | None = None
        if url.option("timeout") is not None:
            try:
                timeout = float(url.option("timeout") or "")
            except ValueError:
                raise ConfigError("URL option timeout must be a number of seconds") from None
            if not timeout > 0:
                raise ConfigError("URL option timeout must be positive")
        db_name = url.option("db_name")
        token = url.credential("token")
        if url.username is not None:
            if token is not None:
                raise ConfigError("give either user:password in the URL or a token, not both")
            password = url.password.reveal() if url.password else ""
            token = Secret(f"{url.username}:{password}")
        if url.scheme == "milvus" and not url.host:
            if token is not None or db_name:
                raise ConfigError("milvus-lite files (milvus:///path.db) take no token or db_name")
            if url.path in ("", "/"):
                raise ConfigError(
                    "milvus URLs name a milvus-lite file (milvus:///path/file.db) or a server "
                    "(milvus://host:19530)"
                )
            if importlib.util.find_spec("milvus_lite") is None:
                raise ConfigError(
                    'milvus:///file.db needs milvus-lite: pip install "vectorport[milvus]"'
                )
            path = Path(url.path)
            if path.suffix != ".db":
                path = path / LITE_FILENAME
            path.parent.mkdir(parents=True, exist_ok=True)
            return cls(str(path), timeout=timeout, shown_as=url.redacted())
        if not url.host:
            raise ConfigError(f"{url.scheme}:// URLs need a host: {url.scheme}://host:port")
        if url.path not in ("", "/"):
            raise ConfigError("Milvus server URLs take no path; use ?db_name=NAME for a database")
        protocol = "https" if url.scheme == "milvus+https" else "http"
        host = f"[{url.host}]" if ":" in url.host else url.host
        uri = f"{protocol}://{host}:{url.port or DEFAULT_PORT}"
        return cls(uri, token=token, db_name=db_name, timeout=timeout, shown_as=url.redacted())

    def __repr__(self) -> str:
        return f"MilvusAdapter({self._shown_as!r})"

    @property
    def capabilities(self) -> Capabilities:
        return MILVUS_CAPABILITIES

    # -- plumbing -----------------------------------------------------------------

    def _call(self, operation: str, collection: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one client call on a collection, loading the collection if it was
        released (as every collection is after a milvus-lite or server restart)."""
        if self._timeout is not None:
            kwargs.setdefault("timeout", self._timeout)
        with translated(operation, collection):
            try:
                return fn(collection, *args, **kwargs)
            except Exception as exc:
                if not is_not_loaded(exc):
                    raise
            self._client.load_collection(collection)
            return fn(collection, *args, **kwargs)

    def _stored_spec(self, name: str) -> IndexSpec:
        with translated("describe_collection", name):
            if not self._client.has_collection(name):  # (pymilvus logs a failed describe)
                raise IndexNotFoundError(name)
            description = self._client.describe_collection(name)
        text = (description.get("properties") or {}).get(SPEC_PROPERTY)
        if not text:
            raise IndexNotFoundError(name)  # a collection vectorport did not create
        return spec_from_json(text)

    # -- lifecycle ----------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        options = creation_options(spec)
        schema = build_schema(self._client, spec)
        index_params = build_index_params(self._client, spec)
        with translated("create_collection"):
            if self._client.has_collection(spec.name):
                raise IndexExistsError(spec.name)
            try:
                self._client.create_collection(
                    spec.name, schema=schema, consistency_level="Strong",
                    properties={SPEC_PROPERTY: spec_to_json(spec)}, **options,
                )
            except Exception as exc:
                if "exist" in str(exc).lower() and self._client.has_collection(spec.name):
                    raise IndexExistsError(spec.name) from exc
                raise
            try:
                # sync=False: pymilvus would poll the (empty) index build every 0.5 s;
                # loading waits for what it needs.
                self._client.create_index(spec.name, index_params, sync=False)
                self._client.load_collection(spec.name)
            except Exception:
                self._client.drop_collection(spec.name)  # never leave half an index
                raise

    def describe_index(self, name: str) -> IndexInfo:
        spec = self._stored_spec(name)
        counts = {ns: self.count(spec, ns, None) for ns in self.list_namespaces(spec)}
        counts = {ns: n for ns, n in counts.items() if n}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with translated("list_collections"):
            names = list(self._client.list_collections())
        out = []
        for name in names:
            try:
                self._stored_spec(name)
            except IndexNotFoundError:
                continue
            out.append(name)
        return out

    def delete_index(self, name: str) -> None:
        self._stored_spec(name)
        with translated("drop_collection", name):
            self._client.drop_collection(name)

    # -- data ---------------------------------------------------------------------

    def _row(self, index: IndexSpec, namespace: str, record: Record) -> dict[str, Any]:
        meta, aux = layout.encode_metadata(record.metadata)
        row: dict[str, Any] = {
            layout.PK: layout.make_pk(namespace, record.id),
            layout.NAMESPACE: namespace,
            layout.VECTOR: record.vector.tolist(),
            layout.META: meta,
            layout.DOCUMENT: record.document,
        }
        if index.sparse:
            positive, negative, zeros = layout.encode_sparse(record.sparse)
            row[layout.SPARSE] = positive
            row[layout.SPARSE_NEGATIVE] = negative
            if zeros:
                aux[layout.ZERO_WEIGHTS] = zeros
        row[layout.AUX] = aux
        if record.document is not None and (
            len(record.document.encode("utf-8")) > layout.DOCUMENT_MAX_BYTES
        ):
            raise ValidationError(
                f"record {record.id!r}: Milvus keeps documents of at most "
                f"{layout.DOCUMENT_MAX_BYTES} UTF-8 bytes"
            )
        return row

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        rows = [self._row(index, namespace, r) for r in records]  # all checked before I/O
        if rows:
            self._call("upsert", index.name, self._client.upsert, rows)

    def _output_fields(self, index: IndexSpec, request: QueryRequest) -> list[str]:
        include = request.include
        fields = [layout.PK]
        if request.vector is not None or include.vectors:
            fields.append(layout.VECTOR)
        if index.sparse and (request.sparse is not None or include.vectors):
            fields += [layout.SPARSE, layout.SPARSE_NEGATIVE]
        if include.metadata:
            fields.append(layout.META)
        if include.vectors and index.sparse:
            fields.append(layout.AUX)
        if include.documents:
            fields.append(layout.DOCUMENT)
        return fields

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        options = request.options_for(BACKEND)
        if not isinstance(options, Mapping) or set(options) - _QUERY_OPTIONS:
            raise ValidationError(
                f"unknown milvus query option(s) {', '.join(sorted(map(str, options)))}; "
                "the milvus adapter takes none"
            )
        expression = scoped(request.namespace, request.filter)
        source = _Candidates(self, index, request, expression, self._output_fields(index, request))
        scorer = Scorer.for_query(index.metric, request.vector, request.sparse)
        best = exact_top_k(scorer, source, request.top_k, request.min_score, MILVUS_MAX_TOP_K)
        include = request.include
        matches = []
        for row, score in best:
            matches.append(Match(
                id=layout.split_pk(str(row[layout.PK]))[1],
                score=score,
                metadata=layout.decode_metadata(row.get(layout.META)) if include.metadata else None,
                vector=_read_only(row[layout.VECTOR]) if include.vectors else None,
                sparse=_sparse_of(row) if include.vectors and index.sparse else None,
                document=row.get(layout.DOCUMENT) if include.documents else None,
            ))
        return matches

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        fields = [layout.PK, layout.VECTOR, layout.META, layout.AUX, layout.DOCUMENT]
        if index.sparse:
            fields += [layout.SPARSE, layout.SPARSE_NEGATIVE]
        out: list[Record] = []
        pks = [layout.make_pk(namespace, i) for i in dict.fromkeys(ids)]
        for start in range(0, len(pks), _PK_CHUNK):
            rows = self._call("query", index.name, self._client.query,
                              filter=pk_in(pks[start:start + _PK_CHUNK]), output_fields=fields,
                              consistency_level="Strong")
            for row in rows:
                out.append(Record(
                    id=layout.split_pk(str(row[layout.PK]))[1],
                    vector=_read_only(row[layout.VECTOR]),
                    metadata=layout.decode_metadata(row.get(layout.META)),
                    sparse=_sparse_of(row) if index.sparse else None,
                    document=row.get(layout.DOCUMENT),
                ))
        return out

    def delete(
        self, index: IndexSpec, namespace: str, ids: Sequence[str] | None, filter: Filter | None
    ) -> None:
        if ids is None:
            expression = scoped(namespace, filter)
            self._call("delete", index.name, self._client.delete, filter=expression)
            return
        pks = [layout.make_pk(namespace, i) for i in dict.fromkeys(ids)]
        for start in range(0, len(pks), _PK_CHUNK):
            self._call("delete", index.name, self._client.delete,
                       filter=pk_in(pks[start:start + _PK_CHUNK]))

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        rows = self._call("count", index.name, self._client.query,
                          filter=scoped(namespace, filter), output_fields=["count(*)"],
                          consistency_level="Strong")
        return int(rows[0]["count(*)"]) if rows else 0

    def _ordered(self, index: IndexSpec, expression: str, fields: list[str], limit: int,
                 consistency: str = "Strong") -> list[Row]:
        """Up to ``limit`` rows in primary-key order (the query-iterator ordering)."""
        rows = self._call("query", index.name, self._client.query, filter=expression,
                          output_fields=fields, limit=limit, iterator="True",
                          consistency_level=consistency)
        return sorted(rows, key=lambda r: str(r[layout.PK]))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        # Primary keys are "namespace/id", so each namespace is one run of keys; the
        # next one starts at or after namespace + "0" ("/" + 1).
        found: list[str] = []
        expression = f"{layout.PK} >= {quote_string('')}"
        while True:
            rows = self._ordered(index, expression, [layout.PK, layout.NAMESPACE], 1)
            if not rows:
                return found
            namespace = str(rows[0][layout.NAMESPACE])
            found.append(namespace)
            expression = f"{layout.PK} >= {quote_string(namespace + '0')}"

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        self._call("delete", index.name, self._client.delete,
                   filter=namespace_expression(namespace))

    # -- optional protocols ---------------------------------------------------------

    def list_ids(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        prefix: str | None,
        filter: Filter | None,
        limit: int,
        cursor: str | None,
    ) -> IdPage:
        bounds: list[str] = []
        if cursor is not None:
            bounds.append(f"{layout.PK} > {quote_string(layout.make_pk(namespace, cursor))}")
        if prefix:
            low = layout.make_pk(namespace, prefix)
            bounds.append(f"{layout.PK} >= {quote_string(low)}")
            high = _successor(low)
            if high is not None:
                bounds.append(f"{layout.PK} < {quote_string(high)}")
        page_size = min(limit, MILVUS_MAX_TOP_K - 1)
        rows = self._ordered(index, scoped(namespace, filter, *bounds), [layout.PK], page_size + 1)
        ids = [layout.split_pk(str(r[layout.PK]))[1] for r in rows]
        page = tuple(ids[:page_size])
        return IdPage(page, page[-1] if len(ids) > page_size else None)

    def close(self) -> None:
        with translated("close"):
            self._client.close()


def _sparse_of(row: Row) -> SparseVector | None:
    aux = row.get(layout.AUX) or {}
    if isinstance(aux, str):
        aux = json.loads(aux)
    return layout.decode_sparse(row, aux.get(layout.ZERO_WEIGHTS))


class _Candidates:
    """The :class:`~.ranking.CandidateSource` of one query: native searches and ordered
    queries, all within the query's namespace and filter."""

    def __init__(self, adapter: MilvusAdapter, index: IndexSpec, request: QueryRequest,
                 expression: str, fields: list[str]) -> None:
        self.adapter = adapter
        self.index = index
        self.request = request
        self.expression = expression
        self.fields = fields
        self.consistency = _CONSISTENCY[request.consistency]

    def _search_params(self, depth: int) -> dict[str, Any]:
        params: dict[str, Any] = {}
        spec, request = self.index, self.request
        if spec.index_type == "hnsw":
            # Milvus wants ef >= limit; the caller's ef widens the search further.
            params["ef"] = max(depth, request.ef or 0)
        elif spec.index_type == "ivf" and request.probes is not None:
            params["nprobe"] = min(request.probes, spec.index_params.get("lists", 128))
        return {"metric_type": MILVUS_METRICS[spec.metric], "params": params}

    def _search(self, data: Any, field: str, depth: int, search_params: dict[str, Any]) -> list[Row]:
        client = self.adapter._client
        result = self.adapter._call(
            "search", self.index.name, client.search, data=[data], anns_field=field,
            limit=depth, filter=self.expression, output_fields=self.fields,
            search_params=search_params, consistency_level=self.consistency,
        )
        rows: list[Row] = []
        for hit in result[0] if result else ():
            entity = dict(hit.get("entity") or {})
            entity[layout.PK] = hit.get(layout.PK, entity.get(layout.PK))
            rows.append(entity)
        return rows

    def dense(self, limit: int) -> Sequence[Row]:
        assert self.request.vector is not None
        return self._search(self.request.vector.tolist(), layout.VECTOR, limit,
                            self._search_params(limit))

    def sparse(self, query: Mapping[int, float], field: str, limit: int) -> Sequence[Row]:
        params = {"metric_type": "IP", "params": {"drop_ratio_search": 0.0}}
        return self._search(dict(query), field, limit, params)

    def in_id_order(self, exclude: Sequence[str], limit: int) -> Sequence[Row]:
        expression = self.expression
        if exclude:
            expression = f"{expression} and (not ({pk_in(list(exclude))}))"
        return self.adapter._ordered(self.index, expression, self.fields, limit,
                                     self.consistency)

    def scan(self) -> Iterable[Row]:
        return _scan(self.adapter, self.index.name, self.expression, self.fields,
                     self.consistency)


def _scan(adapter: MilvusAdapter, collection: str, expression: str, fields: list[str],
          consistency: str) -> Iterator[Row]:
    with translated("query_iterator", collection):
        iterator = adapter._client.query_iterator(
            collection, batch_size=_SCAN_BATCH, filter=expression, output_fields=fields,
            consistency_level=consistency,
        )
        try:
            while True:
                page = iterator.next()
                if not page:
                    return
                yield from page
        finally:
            iterator.close()


__all__ = ["MilvusAdapter", "is_not_found"]
