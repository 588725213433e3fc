"""The ``local`` adapter: the reference implementation of the contract.

``memory://`` keeps everything in process memory; ``local:///path`` keeps it durable in
``path`` (a SQLite file, or ``vectorport.sqlite3`` inside a folder); ``local://`` alone
uses the user's data folder. Several processes (and several stores in one process) may
open one file: every call first catches up with what the others committed, so reads are
strongly consistent across them, and writes queue on SQLite's write lock for at most
``?busy_timeout=`` seconds (default 5) before a ``TransientBackendError`` (see
:mod:`vectorport.adapters.local.storage`). Search is exact for all three metrics, filters are
evaluated by the oracle itself, and hybrid queries score ``dense + sparse``.

Namespaces are separate in-memory column sets keyed by name (and a key column in
SQLite), so no operation in one can see another.
"""

from __future__ import annotations

import bisect
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import numpy as np

from vectorport.adapters.local import bounds, explain, ranking
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.adapters.local.dense import answer_one, dense_answers, full_match
from vectorport.adapters.local.engine import (
    KeyBuffer,
    NamespaceData,
    candidates,
    candidates_many,
    top_rows,
)
from vectorport.adapters.local.options import MEMORY_URL_OPTIONS, busy_timeout
from vectorport.adapters.local.storage import (
    DEFAULT_BUSY_TIMEOUT,
    Changes,
    SqliteStorage,
    Transaction,
)
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL
from vectorport.core.errors import ConfigError, IndexExistsError, IndexNotFoundError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.types import (
    DenseMatrix,
    Explanation,
    IdPage,
    IndexInfo,
    IndexSpec,
    Match,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
)

DB_FILENAME = "vectorport.sqlite3"
_RETIRED_KEPT = 4096
"""How many deleted indexes' specs are remembered to refuse their stale handles; past
that, a stale handle is still refused unless its spec equals the new index's."""


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "vectorport"


class _IndexState:
    def __init__(self, spec: IndexSpec, generation: int = 0) -> None:
        self.spec = spec
        self.generation = generation
        self.namespaces: dict[str, NamespaceData] = {}

    def ns(self, namespace: str, create: bool = False) -> NamespaceData | None:
        data = self.namespaces.get(namespace)
        if data is None and create:
            data = self.namespaces[namespace] = NamespaceData(self.spec.dimension)
        return data


class LocalAdapter:
    """Exact, in-process search; optionally durable in SQLite, shared by processes."""

    backend: ClassVar[str] = "local"

    def __init__(self, path: Path | None = None,
                 busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self._lock = threading.RLock()
        # the keys of each single dense query's product, reused (under the lock)
        self._keys = KeyBuffer()
        self._indexes: dict[str, _IndexState] = {}
        # Specs of deleted (or replaced) indexes, by identity, kept alive so ids stay
        # unique: a handle still holding one is stale even if an index of the same
        # name and shape exists again.
        self._retired: dict[int, IndexSpec] = {}
        self._storage = SqliteStorage(path, busy_timeout) if path is not None else None
        self.path = path
        with self._lock:
            self._refresh()

    @classmethod
    def from_url(cls, url: ConnectionURL) -> LocalAdapter:
        if url.scheme == "memory":
            MEMORY_URL_OPTIONS.url(url)  # none: refuses unknown ones
            if url.host or url.path not in ("", "/"):
                raise ConfigError("memory:// takes no path; use local:///path to keep data")
            return cls(None)
        seconds = busy_timeout(url)  # options first, before the path is looked at
        if url.host:
            raise ConfigError(
                f"local URLs take a path, not a host: use local:///{url.host}{url.path} "
                "(three slashes) for an absolute path"
            )
        path = Path(url.path) if url.path not in ("", "/") else default_data_dir()
        if path.suffix not in (".db", ".sqlite", ".sqlite3"):
            path = path / DB_FILENAME
        return cls(path, seconds)

    def __repr__(self) -> str:
        return f"LocalAdapter(path={str(self.path) if self.path else None!r})"

    @property
    def capabilities(self) -> Capabilities:
        return LOCAL_CAPABILITIES

    def describe_engine(self) -> str:
        """The engine behind this store, for the capability matrix."""
        engine = f"numpy {np.__version__}"
        return engine + (f", SQLite {sqlite3.sqlite_version}" if self.path else "")

    # -- staying in step with other processes -----------------------------------------

    def _refresh(self) -> None:
        """Catch up with what other processes committed (callers hold the lock).

        One ``PRAGMA data_version`` when nothing changed; otherwise only what changed
        is read and applied."""
        if self._storage is None:
            return
        changes = self._storage.refresh()
        if changes is not None:
            self._apply(changes)

    def _apply(self, changes: Changes) -> None:
        assert self._storage is not None
        try:
            self._apply_changes(changes)
        except BaseException:
            self._storage.forget()  # memory is now suspect: reload everything next time
            raise

    def _apply_changes(self, changes: Changes) -> None:
        stored = {s.spec.name: s for s in changes.indexes}
        for name, state in list(self._indexes.items()):
            now = stored.get(name)
            if now is None or now.generation != state.generation:
                self._retire(name)
            elif changes.full:  # same index: keep its identity, reload its contents
                state.namespaces.clear()
        for name, entry in stored.items():
            if name not in self._indexes:
                self._indexes[name] = _IndexState(entry.spec, entry.generation)
        for index, namespace in changes.resets:
            if index in self._indexes:
                self._indexes[index].namespaces.pop(namespace, None)
        removed: dict[tuple[str, str], list[str]] = {}
        for index, namespace, rid in changes.tombstones:
            removed.setdefault((index, namespace), []).append(rid)
        for (index, namespace), ids in removed.items():
            data = self._indexes[index].ns(namespace) if index in self._indexes else None
            if data is not None:
                data.remove(ids)
        added: dict[tuple[str, str], list[Record]] = {}
        for index, namespace, rec in changes.records:
            added.setdefault((index, namespace), []).append(rec)
        for (index, namespace), recs in added.items():
            if index in self._indexes:
                data = self._indexes[index].ns(namespace, create=True)
                assert data is not None
                data.put(recs)

    def _retire(self, name: str) -> None:
        state = self._indexes.pop(name)
        if len(self._retired) >= _RETIRED_KEPT:
            self._retired.pop(next(iter(self._retired)))
        self._retired[id(state.spec)] = state.spec

    @contextmanager
    def _writing(self) -> Iterator[Transaction | None]:
        """Hold the lock and, when durable, one write transaction that has caught up
        with other processes. Memory is changed inside the body, after the SQL: should
        the commit then fail, the storage forgets what was loaded and the next call
        reloads, so memory never stays ahead of the file."""
        with self._lock:
            if self._storage is None:
                yield None
                return
            with self._storage.transaction(self._apply) as txn:
                yield txn

    def _state(self, index: IndexSpec) -> _IndexState:
        """The live state of the index a handle was opened on.

        A handle whose index was deleted is stale even if another index of the same
        name exists now (created by this process or another): its calls raise
        ``IndexNotFoundError`` rather than reach an index it was not opened on."""
        state = self._indexes.get(index.name)
        if state is None:
            raise IndexNotFoundError(index.name)
        if index is not state.spec and (self._retired.get(id(index)) is index
                                        or index != state.spec):
            stale = IndexNotFoundError(index.name)
            stale.args = (f"index {index.name!r} this handle was opened on was deleted; "
                          "the index of that name now is another one: open it again",)
            raise stale
        return state

    def _named(self, name: str) -> _IndexState:
        state = self._indexes.get(name)
        if state is None:
            raise IndexNotFoundError(name)
        return state

    # -- lifecycle --------------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        with self._writing() as txn:
            if spec.name in self._indexes:
                raise IndexExistsError(spec.name)
            generation = 0
            if txn is not None:
                try:
                    generation = txn.create_index(spec)
                except sqlite3.IntegrityError:  # unreachable under the write lock
                    raise IndexExistsError(spec.name) from None
            self._retired.pop(id(spec), None)
            self._indexes[spec.name] = _IndexState(spec, generation)

    def describe_index(self, name: str) -> IndexInfo:
        with self._lock:
            self._refresh()
            state = self._named(name)
            counts = {ns: len(d) for ns, d in state.namespaces.items() if len(d)}
            return IndexInfo(spec=state.spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with self._lock:
            self._refresh()
            return list(self._indexes)

    def delete_index(self, name: str) -> None:
        with self._writing() as txn:
            self._named(name)
            if txn is not None:
                txn.delete_index(name)
            self._retire(name)

    # -- data -------------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        with self._writing() as txn:
            self._put(txn, self._state(index), namespace, list(records))

    @staticmethod
    def _put(txn: Transaction | None, state: _IndexState, namespace: str,
             records: list[Record]) -> None:
        if txn is not None:
            txn.put(state.spec.name, namespace, records)
        data = state.ns(namespace, create=True)
        assert data is not None
        data.put(records)

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        # reshape, not [None, :]: a zero stride makes numpy skip BLAS (20x slower)
        queries = None if request.vector is None else request.vector.reshape(1, -1)
        if queries is None or request.sparse is not None:
            return self._answer(index, request, queries)[0]
        with self._lock:  # dense only: the single query's own path
            self._refresh()
            data = self._state(index).ns(request.namespace)
            if data is None or not len(data):
                return []
            return answer_one(data, index.metric, request, queries,
                              data.subset(request.filter, index.metric), self._keys)

    def query_many(
        self, index: IndexSpec, request: QueryRequest, vectors: DenseMatrix
    ) -> list[list[Match]]:
        return self._answer(index, request, vectors)

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        return explain.explain_query(index, request)

    def _answer(
        self, index: IndexSpec, request: QueryRequest, queries: DenseMatrix | None
    ) -> list[list[Match]]:
        batch = 1 if queries is None else len(queries)
        with self._lock:
            self._refresh()
            data = self._state(index).ns(request.namespace)
            if data is None or not len(data):
                return [[] for _ in range(batch)]
            subset = data.subset(request.filter, index.metric)
            if request.sparse is None and queries is not None:
                return dense_answers(data, index.metric, request, queries, subset)
            rows = np.arange(len(data)) if subset is None else subset.rows
            dense = None if queries is None else data.dense_scores(index.metric, queries, subset)
            sparse = None
            if request.sparse is not None:
                sparse = data.sparse_scores(request.sparse, rows)
            answers = []
            # every row whose float32 dense score can reach the top k (:mod:`bounds`) is
            # rescored in float64, so ranks and scores are exact
            positions = None
            if dense is not None and queries is not None:
                margins = bounds.score_margins(
                    index.metric, data.dimension, ranking.prepare(queries).norms,
                    0.0 if index.metric == "cosine" else data.max_norm(subset))
                positions = candidates_many(dense if sparse is None else dense + sparse,
                                            request.top_k, margins)
            for b in range(batch):
                if positions is None or queries is None:
                    assert sparse is not None  # the facade requires a dense or sparse query
                    position = candidates(sparse, request.top_k, 0.0)
                    scores = sparse[position]
                else:
                    position = positions[b]
                    scores = data.exact_scores(index.metric, queries[b], rows[position])
                    if sparse is not None:
                        scores += sparse[position]
                best = top_rows(data.ids, rows[position], scores, request.top_k,
                                request.min_score)
                answers.append([full_match(data, row, score, request) for row, score in best])
            return answers

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        with self._lock:
            self._refresh()
            data = self._state(index).ns(namespace)
            if data is None:
                return []
            return [data.record(data.rows[i]) for i in ids if i in data.rows]

    def delete(
        self, index: IndexSpec, namespace: str, ids: Sequence[str] | None, filter: Filter | None
    ) -> None:
        with self._writing() as txn:
            data = self._state(index).ns(namespace)
            if data is None:
                return
            if ids is None:
                ids = [data.ids[r] for r in data.rows_matching(filter)]
            present = [i for i in ids if i in data.rows]
            if txn is not None and present:
                txn.remove(index.name, namespace, present)
            data.remove(present)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        with self._lock:
            self._refresh()
            data = self._state(index).ns(namespace)
            if data is None:
                return 0
            return len(data) if filter is None else len(data.rows_matching(filter))

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        with self._lock:
            self._refresh()
            return [ns for ns, d in self._state(index).namespaces.items() if len(d)]

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        with self._writing() as txn:
            state = self._state(index)
            if txn is not None:
                txn.remove_namespace(index.name, namespace)
            state.namespaces.pop(namespace, None)

    # -- optional protocols -----------------------------------------------------------

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        # read, merge and write in one write transaction: concurrent patches from other
        # processes queue on the lock and each sees the one before, so no key is lost
        with self._writing() as txn:
            state = self._state(index)
            data = state.ns(namespace)
            if data is None or patch.id not in data.rows:
                return False
            old = data.record(data.rows[patch.id])
            metadata = {k: v for k, v in old.metadata.items() if k not in patch.unset_metadata}
            metadata.update(patch.set_metadata)
            new = Record(
                id=old.id,
                vector=patch.vector if patch.vector is not None else old.vector,
                metadata=metadata,
                sparse=patch.sparse if patch.sparse is not None else old.sparse,
                document=patch.document if patch.document is not None else old.document,
            )
            self._put(txn, state, namespace, [new])
            return True

    def scan(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        filter: Filter | None,
        page_size: int,
        cursor: str | None,
    ) -> RecordPage:
        """Whole records in ascending id order after the cursor, as the id listing pages
        them (so a scan sees the same writes made during it), without a fetch per page:
        the sorted ids are kept per data version and a page's vectors are one gather."""
        with self._lock:
            self._refresh()
            data = self._state(index).ns(namespace)
            if data is None:
                return RecordPage((), None)
            ids, rows = data.sorted_ids(), data.rows
            position = bisect.bisect_right(ids, cursor) if cursor is not None else 0
            wanted = None if filter is None else set(data.rows_matching(filter).tolist())
            page: list[int] = []
            while position < len(ids) and len(page) < page_size:
                row = rows[ids[position]]
                position += 1
                if wanted is None or row in wanted:
                    page.append(row)
            records = tuple(data.records(page))
            more = position < len(ids)
            return RecordPage(records, ids[position - 1] if more else None)

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
        with self._lock:
            self._refresh()
            data = self._state(index).ns(namespace)
            if data is None:
                return IdPage((), None)
            ids = sorted(
                rid for rid, row in data.rows.items()
                if (prefix is None or rid.startswith(prefix))
                and (cursor is None or rid > cursor)
                and (filter is None or matches(filter, data.metadata_of(row)))
            )
            page = tuple(ids[:limit])
            return IdPage(page, page[-1] if len(ids) > limit else None)

    def close(self) -> None:
        with self._lock:
            if self._storage is not None:
                self._storage.close()
