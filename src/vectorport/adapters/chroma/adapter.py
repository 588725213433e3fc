"""The ``chroma`` adapter: Chroma 1.x in process (persistent or in memory) or over HTTP.

**Namespaces: one Chroma collection per (index, namespace).** Why not one collection
with a namespace field: Chroma ids are unique per collection, so a shared collection
would need composite ids; every query and count would carry an extra ``where`` clause;
listing namespaces would read every record's metadata; and deleting a namespace would be
a filtered delete. With a collection per namespace, isolation is the engine's own,
counting is ``count()``, listing namespaces is listing collections, and each namespace
has its own HNSW graph. The cost is one collection per namespace in use.

**Index names ↔ collection names** (:mod:`.naming`): index ``docs`` owns the catalog
collection ``docs.vp``, which holds no records and keeps the index spec in its metadata
(:mod:`.naming`), so an index exists without data and ``describe_index`` round-trips
dimension, metric, sparse flag, index type and parameters; and one data collection per
namespace, ``docs.vp.ns-<escaped namespace>-data`` (``docs.vp.ns--data`` for ``""``),
created on the first write. Deleting an index drops the catalog first, so the index is
gone at once; data left by an interrupted delete is purged when the name is reused.

**Upsert replaces.** Chroma's ``upsert`` merges metadata keys into the stored record and
keeps a stored document when none is given. The adapter upserts the new metadata with
every other stored key set to ``None`` (Chroma's way to delete a key), in one atomic
upsert, so a failure (or a SIGKILL) leaves the old or the new records, never a mix and
never none. Which keys are stored it knows from the collection's list of every key ever
written (:mod:`.written`), or, for collections without one (written before) or that
have held a document, by reading the stored metadata of the batch's ids first. A record whose
stored document must go (the new record has none) is written with the empty document
and the ``vectorport:nodoc`` flag in that same upsert, since Chroma cannot clear a
document (:mod:`.codec`). The read and the write of ``upsert`` and ``patch`` hold a
write lock (:mod:`.locking`: threads, and processes sharing a folder), so two writers of
one id never merge their keys.

**Collections are emptied before they are dropped**, because Chroma 1.5 leaks the list
metadata of dropped collections into new records (:mod:`.dropping`).

**Queries.** Filters compile to Chroma ``where`` clauses exactly or raise
(:mod:`.filters`, over the reserved lists of :mod:`.layout`); scores are in
:mod:`.codec`. Chroma orders records at equal distance arbitrarily, so rows are asked
again, deeper, until the group tied at the cut is complete
(:func:`vectorport.adapterkit.fetch_many_until_settled`); the facade orders and cuts.
Documents are Chroma documents; the ``chroma`` query options (``where_document``,
``where``) are in :mod:`.options`. Many queries go to Chroma in one call
(:meth:`ChromaAdapter.query_many`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar, TypeVar

import numpy as np
from chromadb.api.models.Collection import Collection

from vectorport.adapterkit import (
    BackendError,
    Capabilities,
    ConnectionURL,
    DenseMatrix,
    Explanation,
    Filter,
    IndexExistsError,
    IndexInfo,
    IndexNotFoundError,
    IndexSpec,
    Match,
    Metric,
    QueryRequest,
    Record,
    RecordPage,
    RecordPatch,
    at_or_above_cut,
    batches,
    fetch_many_until_settled,
)
from vectorport.adapterkit.handles import Handles
from vectorport.adapters.chroma import bulk, naming
from vectorport.adapters.chroma.capabilities import CHROMA_CAPABILITIES
from vectorport.adapters.chroma.codec import (
    NODOC_FIELD,
    Hit,
    QueryRow,
    decode_metadata,
    matches_of,
    records_of,
    replacing,
)
from vectorport.adapters.chroma.connection import Connection, connect
from vectorport.adapters.chroma.dropping import clear_collection, drop_collection
from vectorport.adapters.chroma.errors import chroma_errors, is_already_exists, is_not_found
from vectorport.adapters.chroma.explain import ChromaQuery, explain_query, prepare_query
from vectorport.adapters.chroma.filters import CompiledFilter, compile_filter
from vectorport.adapters.chroma.floats import refuse_inexact_operands
from vectorport.adapters.chroma.layout import CURRENT, layout_of
from vectorport.adapters.chroma.locking import WriteLock
from vectorport.adapters.chroma.naming import (
    catalog_metadata,
    data_metadata,
    is_catalog,
    spec_of,
)
from vectorport.adapters.chroma.options import (
    check_index_spec,
    collection_configuration,
)
from vectorport.adapters.chroma.written import extend, replace, written_of

CHUNK = 1_000
"""Ids per ``get``/``delete`` call, well under Chroma's batch limit."""

NO_CAP = sys.maxsize
T = TypeVar("T")
"""Chroma has no limit on ``n_results``: widening stops when a query is complete."""


class ChromaAdapter:
    """Chroma through ``chromadb``: one collection per namespace, plus a catalog."""

    backend: ClassVar[str] = "chroma"

    def __init__(self, connection: Connection, lock: WriteLock | None = None, *,
                 sole_writer: bool = False, only_writer: bool = False) -> None:
        self._connection = connection
        self._client = connection.client
        self._lock = lock if lock is not None else WriteLock(f"adapter:{id(self)}")
        # Whether every writer of this Chroma takes self._lock (an in-process Chroma:
        # its folder's flock, or a memory store no other process sees).
        self._sole_writer = sole_writer
        # Whether this adapter is the only writer of its Chroma at all (a memory store:
        # its own database, which no other store or process sees), so that the kept
        # handles' lists of written keys are current without a lookup (see _current).
        self._only_writer = only_writer
        # Data collection handles by name, for the hot paths (upsert, query): looking a
        # collection up cost a sixth of a query. A handle gone stale (its collection
        # dropped, here or by another process) fails with not-found; _using then looks
        # the name up afresh and runs the call once more.
        self._handles: dict[str, Collection] = {}
        # which Index handles still reach the index they were opened on (the kit's
        # Handles): an Index kept across a delete of its index raises
        # IndexNotFoundError, as the reference adapter's do, instead of reading and
        # writing the index created again under its name. An index re-created by
        # another process is noticed when a kept collection handle turns out stale,
        # and before every delete (which reads the stored spec first, so a delete never
        # removes another index's records)
        self._specs = Handles(self._stored_spec, same=naming.same_stored)

    @classmethod
    def from_url(cls, url: ConnectionURL) -> ChromaAdapter:
        if url.scheme != "chroma":
            memory = url.scheme == "chroma+memory"
            return cls(connect(url), WriteLock(f"{url.scheme}:{url.redacted()}"),
                       sole_writer=memory, only_writer=memory)
        folder = Path(url.path).resolve()
        try:
            connection = connect(url)
        except BackendError as exc:
            raise BackendError(_reopen_advice(folder, exc)) from exc
        return cls(connection, WriteLock.of_folder(folder), sole_writer=True)

    def __repr__(self) -> str:
        return f"ChromaAdapter({self._connection.where!r})"

    @property
    def capabilities(self) -> Capabilities:
        return CHROMA_CAPABILITIES

    def close(self) -> None:
        self._connection.close()

    # -- collections ------------------------------------------------------------------

    def _get(self, name: str) -> Collection | None:
        try:
            return self._client.get_collection(name, embedding_function=None)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise

    def _stored_spec(self, index: str) -> IndexSpec:
        return spec_of(self._catalog(index).metadata or {})

    def _catalog(self, index: str) -> Collection:
        catalog = self._get(naming.catalog_collection(index))
        if catalog is None or not is_catalog(catalog.metadata):
            raise IndexNotFoundError(index)
        return catalog

    def _data(self, index: IndexSpec, namespace: str, *, create: bool,
              cached: bool = False) -> Collection | None:
        """The namespace's collection, or ``None`` while it has none and ``create`` is
        off; ``IndexNotFoundError`` when the index itself is gone. ``cached``: a handle
        remembered from before may be returned (for :meth:`_using` only)."""
        self._specs.check(index)
        name = naming.data_collection(index.name, namespace)
        found = self._handles.get(name) if cached else None
        if found is None:
            found = self._get(name)
        if found is None:
            self._catalog(index.name)
            if not create:
                return None
            found = self._client.get_or_create_collection(
                name,
                configuration=collection_configuration(index),  # type: ignore[arg-type]
                metadata=data_metadata(index.name, namespace),
                embedding_function=None,
            )
        self._handles[name] = found
        return found

    def _using(self, index: IndexSpec, namespace: str, create: bool,
               call: Callable[[Collection | None], T]) -> T:
        """``call`` with the namespace's collection from a remembered handle; again with
        a fresh lookup if that handle has gone stale."""
        collection = self._data(index, namespace, create=create, cached=True)
        try:
            return call(collection)
        except Exception as exc:
            if collection is None or not is_not_found(exc):
                raise
            self._handles.pop(collection.name, None)
            self._specs.check_stored(index)  # dropped, perhaps re-created elsewhere
            return call(self._data(index, namespace, create=create))

    def _forget(self, index: str) -> None:
        prefix = naming.data_prefix(index)
        for name in [n for n in self._handles if n.startswith(prefix)]:
            self._handles.pop(name, None)

    def _data_collections(self, index: str) -> dict[str, Collection]:
        """Every data collection of ``index``, by namespace."""
        found: dict[str, Collection] = {}
        for collection in self._client.list_collections():
            namespace = naming.namespace_of_data(index, collection.name)
            if namespace is not None:
                found[namespace] = collection
        return found

    # -- lifecycle --------------------------------------------------------------------

    def create_index(self, spec: IndexSpec) -> None:
        check_index_spec(spec)
        with chroma_errors("create_index"):
            try:
                self._client.create_collection(
                    naming.catalog_collection(spec.name),
                    metadata=catalog_metadata(spec),
                    embedding_function=None,
                )
            except Exception as exc:
                if is_already_exists(exc):
                    raise IndexExistsError(spec.name) from None
                raise
            self._forget(spec.name)
            self._specs.created(spec)
            for collection in self._data_collections(spec.name).values():
                drop_collection(self._client, collection.name)  # orphans of a past delete

    def describe_index(self, name: str) -> IndexInfo:
        with chroma_errors("describe_index"):
            spec = self._stored_spec(name)
            self._specs.stored(name, spec)
            counts = {ns: c.count() for ns, c in self._data_collections(name).items()}
        counts = {ns: n for ns, n in counts.items() if n}
        return IndexInfo(spec=spec, count=sum(counts.values()), namespaces=counts)

    def list_indexes(self) -> list[str]:
        with chroma_errors("list_indexes"):
            return [
                index for collection in self._client.list_collections()
                if (index := naming.index_of_catalog(collection.name)) is not None
                and is_catalog(collection.metadata)
            ]

    def delete_index(self, name: str) -> None:
        with chroma_errors("delete_index"):
            self._catalog(name)
            try:
                self._client.delete_collection(naming.catalog_collection(name))
            except Exception as exc:
                if is_not_found(exc):
                    raise IndexNotFoundError(name) from None
                raise
            self._forget(name)
            self._specs.deleted(name)
            with self._lock.held():  # dropping empties each collection first
                for collection in self._data_collections(name).values():
                    drop_collection(self._client, collection.name)

    # -- writes -----------------------------------------------------------------------

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        if not records:
            return
        with chroma_errors("upsert"):
            self._using(index, namespace, True, lambda c: self._upsert(index, c, records))

    def _upsert(self, index: IndexSpec, collection: Collection | None,
                records: Sequence[Record]) -> None:
        assert collection is not None
        with self._lock.held(), self._writable(index, collection) as current:  # see .locking
            replace(current, records)

    @contextlib.contextmanager
    def _writable(self, index: IndexSpec, collection: Collection) -> Iterator[Collection]:
        """:meth:`_current`, for a write under the lock; on a failure the kept handle is
        dropped, since its list of written keys may lag the stored one (Chroma extended
        it, then something failed), and the next writer looks it up."""
        current = self._current(index, collection)
        try:
            yield current
        except BaseException:
            self._handles.pop(current.name, None)
            raise

    def _current(self, index: IndexSpec, collection: Collection) -> Collection:
        """``collection`` as stored now, for a writer holding the lock: its list of
        written keys (:mod:`.written`) may have grown in another process since the
        handle was kept. Not found raises, so :meth:`_using` looks it up afresh. The
        only writer of a memory store keeps its handles current itself (``extend``
        updates the handle it writes through): no lookup, ≈ 0.3–0.6 ms an upsert."""
        if self._only_writer or written_of(collection.metadata) is None:
            return collection  # no list to keep current, or none but ours
        fresh = self._client.get_collection(collection.name, embedding_function=None)
        if fresh.id != collection.id:  # dropped and created again, perhaps elsewhere
            self._handles.pop(collection.name, None)
            self._specs.check_stored(index)
        self._handles[collection.name] = fresh
        return fresh

    def upsert_bulk(self, index: IndexSpec, namespace: str, records: Sequence[Record], *,
                    workers: int) -> None:
        """Batches of the client's ``max_batch_size``, with no metadata read when the
        namespace starts empty (see :mod:`.bulk`); ``workers`` is unused, since writers
        of one Chroma take turns."""
        with chroma_errors("upsert"):
            size = self._client.get_max_batch_size()

            def load(collection: Collection | None) -> None:
                assert collection is not None
                with self._lock.held(), self._writable(index, collection) as current:
                    bulk.load(current, records, size, replace, locked_out=self._sole_writer)

            self._using(index, namespace, True, load)

    def delete(
        self, index: IndexSpec, namespace: str, ids: Sequence[str] | None, filter: Filter | None
    ) -> None:
        compiled = compile_filter(filter) if ids is None else None
        self._check_numbers(filter)
        with chroma_errors("delete"):
            self._specs.check_stored(index)  # never delete from an index replaced elsewhere
            collection = self._data(index, namespace, create=False)
            if collection is None:
                return
            if compiled is not None:
                compiled = _for_records(compiled, filter, collection)
            with self._lock.held():  # no reader meets a record half deleted
                if ids is not None:
                    for chunk in batches(ids, CHUNK):
                        collection.delete(ids=chunk)
                elif compiled is not None and not compiled.matches_nothing:
                    if compiled.where is None:
                        clear_collection(collection)
                    else:
                        collection.delete(where=compiled.where)

    def delete_namespace(self, index: IndexSpec, namespace: str) -> None:
        with chroma_errors("delete_namespace"):
            self._specs.check_stored(index)
            self._handles.pop(naming.data_collection(index.name, namespace), None)
            with self._lock.held():  # dropping empties the collection first (.dropping)
                drop_collection(self._client, naming.data_collection(index.name, namespace))

    def patch(self, index: IndexSpec, namespace: str, patch: RecordPatch) -> bool:
        with chroma_errors("patch"):
            collection = self._data(index, namespace, create=False)
            if collection is None:
                return False
            # read and write as one step (see .locking)
            with self._lock.held(), self._writable(index, collection) as collection:
                # Chroma computes embeddings for new documents unless given some, so a
                # document-only patch sends the stored vector back
                needs_vector = patch.document is not None and patch.vector is None
                stored = collection.get(ids=[patch.id], include=(
                    ["metadatas", "embeddings"] if needs_vector else ["metadatas"]))
                if not stored["ids"]:
                    return False
                old = stored["metadatas"][0] if stored["metadatas"] else None
                metadata = {k: v for k, v in decode_metadata(old).items()
                            if k not in patch.unset_metadata}
                metadata.update(patch.set_metadata)
                new = layout_of(collection.metadata).encode(metadata)
                if patch.document is None and old and old.get(NODOC_FIELD):
                    new[NODOC_FIELD] = True  # the document stays removed
                changes = replacing(new, old)
                known = written_of(collection.metadata)
                if known is not None:
                    extend(collection, known, [new], patch.document is not None)
                collection.update(
                    ids=[patch.id],
                    embeddings=(np.asarray(stored["embeddings"], dtype=np.float32)[:1]
                                if needs_vector else None if patch.vector is None
                                else np.stack([patch.vector]).astype(np.float32)),
                    metadatas=[changes] if changes is not None else None,
                    documents=[patch.document] if patch.document is not None else None,
                )
            return True

    # -- reads ------------------------------------------------------------------------

    def fetch(self, index: IndexSpec, namespace: str, ids: Sequence[str]) -> list[Record]:
        with chroma_errors("fetch"):
            collection = self._data(index, namespace, create=False)
            if collection is None:
                return []
            with self._lock.reading():  # never a record torn by a write (.locking)
                return [
                    record
                    for chunk in batches(ids, CHUNK)
                    for record in records_of(collection.get(
                        ids=chunk, include=["embeddings", "metadatas", "documents"]))
                ]

    def scan(
        self,
        index: IndexSpec,
        namespace: str,
        *,
        filter: Filter | None,
        page_size: int,
        cursor: str | None,
    ) -> RecordPage:
        """Pages by offset in Chroma's own storage order (its internal sequence ids):
        exact over an unchanging collection; a record replaced during a scan moves to
        the end and may be seen twice, one deleted may shift a neighbour out of view."""
        compiled = compile_filter(filter)
        self._check_numbers(filter)
        offset = int(cursor) if cursor is not None else 0
        with chroma_errors("scan"):
            collection = self._data(index, namespace, create=False)
            if collection is None or compiled.matches_nothing:
                return RecordPage((), None)
            compiled = _for_records(compiled, filter, collection)
            with self._lock.reading():
                got = collection.get(where=compiled.where, limit=page_size, offset=offset,
                                     include=["embeddings", "metadatas", "documents"])
        records = tuple(records_of(got))
        more = len(records) == page_size
        return RecordPage(records, str(offset + len(records)) if more else None)

    def count(self, index: IndexSpec, namespace: str, filter: Filter | None) -> int:
        compiled = compile_filter(filter)
        self._check_numbers(filter)
        with chroma_errors("count"):
            collection = self._data(index, namespace, create=False)
            if collection is None or compiled.matches_nothing:
                return 0
            compiled = _for_records(compiled, filter, collection)
            if compiled.where is None:
                return collection.count()
            return len(collection.get(where=compiled.where, include=[])["ids"])

    def list_namespaces(self, index: IndexSpec) -> list[str]:
        with chroma_errors("list_namespaces"):
            self._specs.check_stored(index)
            return [ns for ns, c in self._data_collections(index.name).items() if c.count()]

    def _check_numbers(self, node: Filter | None) -> None:
        """Refuse, before any request, a filter number the engine would parse as
        another (a Chroma server: see :mod:`.floats`)."""
        if node is not None and not self._connection.exact_filter_numbers:
            refuse_inexact_operands(node)

    def query(self, index: IndexSpec, request: QueryRequest) -> list[Match]:
        assert request.vector is not None  # the facade refuses sparse queries here
        return self._query(index, request, request.vector[np.newaxis, :], "query")[0]

    def explain_query(self, index: IndexSpec, request: QueryRequest) -> Explanation:
        return explain_query(index, request, NO_CAP)

    def query_many(
        self, index: IndexSpec, request: QueryRequest, vectors: DenseMatrix
    ) -> list[list[Match]]:
        """Every row in one Chroma query: Chroma takes many query embeddings at once."""
        return self._query(index, request, vectors, "query_many")

    def _query(self, index: IndexSpec, request: QueryRequest, vectors: DenseMatrix,
               operation: str) -> list[list[Match]]:
        prepared = prepare_query(request)  # explain builds the same
        self._check_numbers(request.filter)
        if prepared.compiled.matches_nothing:
            return [[] for _ in range(len(vectors))]

        def nearest(collection: Collection | None) -> list[list[Match]]:
            if collection is None:
                return [[] for _ in range(len(vectors))]
            return self._nearest(collection, index.metric, request, vectors, prepared)

        with chroma_errors(operation):
            return self._using(index, request.namespace, False, nearest)

    def _nearest(
        self,
        collection: Collection,
        metric: Metric,
        request: QueryRequest,
        vectors: DenseMatrix,
        prepared: ChromaQuery,
    ) -> list[list[Match]]:
        """Each row's candidates, complete under ties at the cut; rows whose answer is
        not yet complete are asked again, together, twice as deep."""
        layout = layout_of(collection.metadata)
        if layout.version != prepared.layout.version:
            prepared = prepare_query(request, layout)  # a collection written before
        include = list(prepared.include)

        def search(positions: Sequence[int], depth: int) -> list[list[Hit]]:
            with self._lock.reading():  # never a record torn by a write (.locking)
                result = collection.query(
                    # all rows (always, on the first ask) without copying them
                    query_embeddings=(vectors if len(positions) == len(vectors)
                                      else vectors[list(positions)]),
                    n_results=depth,
                    where=prepared.compiled.where,
                    where_document=prepared.where_document,  # type: ignore[arg-type]
                    include=include,  # type: ignore[arg-type]
                )
            rows = [QueryRow.of(result, row) for row in range(len(positions))]
            return [[(s, r, i) for i, s in enumerate(r.scores(metric))] for r in rows]

        answers = fetch_many_until_settled(len(vectors), search, _score, request.top_k,
                                           cap=NO_CAP, min_score=request.min_score)
        # Only rows that can make the cut become matches: the extra row asked to see a
        # tie (top_k + 1) is not decoded when it scores below the top_k-th.
        return [matches_of(at_or_above_cut(hits, request.top_k, _score), request.include)
                for hits in answers]


def _score(hit: Hit) -> float:
    return hit[0]


def _for_records(compiled: CompiledFilter, filter: Filter | None,
                 collection: Collection) -> CompiledFilter:
    """``compiled`` (made in the current layout, before any I/O, to refuse early) for the
    layout of ``collection``'s records."""
    layout = layout_of(collection.metadata)
    return compiled if layout is CURRENT else compile_filter(filter, layout)


def _reopen_advice(folder: Path, exc: BaseException) -> str:
    """What to tell someone whose Chroma folder no longer opens (say, after a crash)."""
    return (
        f"could not open the Chroma data in {folder} ({exc}). Chroma commits every write "
        "to its SQLite log before applying it, and vectorport keeps that log so that "
        "an index torn by a killed process is rebuilt from it at connect. To recover: "
        "make sure no other program is using the folder and retry; if it still fails, "
        "keep a copy of the folder and restore it from a backup or a `vectorport "
        "export` file (`chroma vacuum` would purge the log a rebuild needs)"
    )
