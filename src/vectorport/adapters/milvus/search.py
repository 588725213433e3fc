"""The native Milvus searches behind the exact ranking of :mod:`.ranking`.

:class:`Candidates` is the :class:`~.ranking.CandidateSource` of one query: dense and
sparse ANN searches, ordered scalar queries and a full scan, all within the query's
namespace and filter, asking for the fields the ranking and the answer need.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from vectorport.adapterkit import IndexSpec, QueryRequest
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.errors import translated
from vectorport.adapters.milvus.explain import CONSISTENCY, dense_search_params
from vectorport.adapters.milvus.filters import pk_not_in
from vectorport.adapters.milvus.ranking import Row

if TYPE_CHECKING:
    from vectorport.adapters.milvus.adapter import MilvusAdapter

SCAN_BATCH = 4_096

_NO_SESSION_TS = "failed to get mvccTs from milvus server"
"""The start of the warning pymilvus' query iterator logs when the engine sends no
session timestamp (milvus-lite 3 never does: :attr:`.engine_line.Engine.session_ts`)."""
_scanning_without_session_ts: ContextVar[bool] = ContextVar(
    "vectorport_milvus_scanning_without_session_ts", default=False)


class _KnownMissingSessionTs(logging.Filter):
    """Drops that warning while this thread starts one of the adapter's scans on an
    engine known to send no timestamp, where it says nothing the user can act on (a
    query falling back to a scan would print it); pymilvus' other records, and the
    same warning from anyone else's iterator or a server, pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_scanning_without_session_ts.get()
                    and record.getMessage().startswith(_NO_SESSION_TS))


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(
    _KnownMissingSessionTs())


class Candidates:
    """The :class:`~.ranking.CandidateSource` of one query: native searches and ordered
    queries, all within the query's namespace and filter."""

    def __init__(self, adapter: MilvusAdapter, index: IndexSpec, request: QueryRequest,
                 expression: str, fields: list[str]) -> None:
        self.adapter = adapter
        self.index = index
        self.request = request
        self.expression = expression
        self.fields = fields
        self.consistency = CONSISTENCY[request.consistency]

    def _search_params(self, depth: int) -> dict[str, Any]:
        return dense_search_params(self.index, self.request, depth)  # explain shows it

    def _search(self, data: Any, field: str, depth: int, search_params: dict[str, Any]) -> Sequence[Row]:
        client = self.adapter._client
        result = self.adapter._call(
            "search", self.index.name, client.search, data=[data], anns_field=field,
            limit=depth, filter=self.expression, output_fields=self.fields,
            search_params=search_params, consistency_level=self.consistency,
        )
        if not result:
            return []
        return self.adapter._hits.rows(result[0], dynamic=layout.DYNAMIC in self.fields)

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
            negation = self.adapter.engine.negation
            expression = f"{expression} and {pk_not_in(list(exclude), negation=negation)}"
        return self.adapter._ordered(self.index, expression, self.fields, limit,
                                     self.consistency)

    def scan(self) -> Iterable[Row]:
        return _scan(self.adapter, self.index.name, self.expression, self.fields,
                     self.consistency)


def _scan(adapter: MilvusAdapter, collection: str, expression: str, fields: list[str],
          consistency: str) -> Iterator[Row]:
    with translated("query_iterator", collection):
        quiet = _scanning_without_session_ts.set(not adapter.engine.session_ts)
        try:  # the iterator logs its warning while it is made, not while it reads
            iterator = adapter._client.query_iterator(
                collection, batch_size=SCAN_BATCH, filter=expression, output_fields=fields,
                consistency_level=consistency, **adapter._t(),
            )
        finally:
            _scanning_without_session_ts.reset(quiet)
        try:
            while True:
                page = iterator.next()
                if not page:
                    return
                yield from page
        finally:
            iterator.close()


__all__ = ["CONSISTENCY", "Candidates"]
