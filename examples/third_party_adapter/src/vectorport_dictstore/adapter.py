"""``dictstore://``: records in nested dicts, brute-force search in pure Python.

Namespaces are the second level of the dict: ``data[index][namespace][id]``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import ClassVar

from vectorport.adapterkit import (
    Capabilities,
    ConnectionURL,
    Filter,
    Handles,
    IndexExistsError,
    IndexInfo,
    IndexNotFoundError,
    IndexSpec,
    Match,
    OptionSpec,
    QueryRequest,
    Record,
    RecordPage,
)
from vectorport_dictstore.filters import compile_filter
from vectorport_dictstore.plugin import CAPABILITIES


def _score(metric: str, q: Sequence[float], x: Sequence[float]) -> float:
    if metric == "cosine":
        nq = math.sqrt(sum(a * a for a in q))
        nx = math.sqrt(sum(b * b for b in x))
        return sum(a * b for a, b in zip(q, x, strict=True)) / (nq * nx) if nq and nx else 0.0
    return 1.0 / (1.0 + math.sqrt(sum((a - b) ** 2 for a, b in zip(q, x, strict=True))))


URL_OPTIONS = OptionSpec("dictstore", "URL")
"""``dictstore://`` takes no options; declaring them still gives the kit's error wording."""


class DictStoreAdapter:
    backend: ClassVar[str] = "dictstore"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._specs: dict[str, IndexSpec] = {}
        self._data: dict[str, dict[str, dict[str, Record]]] = {}
        # A handle kept across a delete of its index must not reach the index created
        # again under its name: the kit tells the handles apart (an identity test a call).
        self._handles = Handles(self._stored_spec)

    @classmethod
    def from_url(cls, url: ConnectionURL) -> DictStoreAdapter:
        URL_OPTIONS.url(url)
        return cls()

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def _stored_spec(self, name: str) -> IndexSpec:
        if name not in self._specs:
            raise IndexNotFoundError(name)
        return self._specs[name]

    def _ns(self, index: IndexSpec, namespace: str) -> dict[str, Record]:
        self._handles.check(index)  # IndexNotFoundError for a deleted index's handle
        return self._data[index.name].setdefault(namespace, {})

    def create_index(self, spec: IndexSpec) -> None:
        with self._lock:
            if spec.name in self._specs:
                raise IndexExistsError(spec.name)
            self._specs[spec.name] = spec
            self._data[spec.name] = {}
            self._handles.created(spec)

    def describe_index(self, name: str) -> IndexInfo:
        with self._lock:
            if name not in self._specs:
                raise IndexNotFoundError(name)
            counts = {ns: len(recs) for ns, recs in self._data[name].items() if recs}
            return IndexInfo(self._specs[name], sum(counts.values()), counts)

    def list_indexes(self) -> list[str]:
        return list(self._specs)

    def delete_index(self, name: str) -> None:
        with self._lock:
            if name not in self._specs:
                raise IndexNotFoundError(name)
            del self._specs[name], self._data[name]
            self._handles.deleted(name)

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        with self._lock:
            target = self._ns(index, namespace)
            for record in records:
                target[record.id] = record

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        predicate = compile_filter(request.filter)  # compile first: refuse before any I/O
        assert request.vector is not None  # sparse is not declared, so the facade refused it
        query = [float(x) for x in request.vector]
        with self._lock:
            scored = [
                (_score(index.metric, query, [float(x) for x in r.vector]), r)
                for r in self._ns(index, request.namespace).values()
                if predicate(r.metadata)
            ]
        # The facade orders and cuts; the adapter owes it the candidates complete under
        # ties at the cut. Scoring every record exactly, the contract's top_k is enough.
        scored.sort(key=lambda p: (-p[0], p[1].id))
        inc = request.include
        return [
            Match(id=r.id, score=s,
                  metadata=dict(r.metadata) if inc.metadata else None,
                  vector=r.vector if inc.vectors else None,
                  document=r.document if inc.documents else None)
            for s, r in scored[: request.top_k]
        ]

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        with self._lock:
            target = self._ns(index, namespace)
            return [target[i] for i in ids if i in target]

    def scan(self, index: IndexSpec, namespace: str, *, filter: Filter | None,
             page_size: int, cursor: str | None) -> RecordPage:
        # In id order, resuming after the last id seen: stable across writes.
        predicate = compile_filter(filter)
        with self._lock:
            target = self._ns(index, namespace)
            ids = sorted(i for i, r in target.items()
                         if (cursor is None or i > cursor) and predicate(r.metadata))
            page = tuple(target[i] for i in ids[:page_size])
        return RecordPage(page, page[-1].id if len(ids) > page_size else None)

    def delete(self, index: IndexSpec, namespace: str, ids: Sequence[str] | None,
               filter: Filter | None) -> None:
        predicate = compile_filter(filter)
        with self._lock:
            target = self._ns(index, namespace)
            doomed = ids if ids is not None else [
                i for i, r in target.items() if predicate(r.metadata)]
            for rid in doomed:
                target.pop(rid, None)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        predicate = compile_filter(filter)
        with self._lock:
            return sum(1 for r in self._ns(index, namespace).values() if predicate(r.metadata))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        with self._lock:
            self._ns(index, "")
            return [ns for ns, recs in self._data[index.name].items() if recs]

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        with self._lock:
            self._ns(index, namespace).clear()

    def close(self) -> None:
        pass
