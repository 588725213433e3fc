"""Dropping Chroma collections without leaving list metadata behind.

Chroma 1.5's ``delete_collection`` (and ``delete_database``) removes a collection's
records and scalar metadata but not its list-valued metadata (the
``embedding_metadata_array`` table; chroma-core/chroma#7594, fixes pending). Those rows
are keyed by an internal record number that SQLite hands out again, so the next records
written, in *any* collection, silently inherit the dropped records' list values: they
show up in ``get`` and match ``where`` clauses. Deleting the records themselves first
removes their list metadata correctly, so that is what vectorport does before it drops
a collection (``delete_index``, ``delete_namespace``, closing a ``chroma+memory://``
store). Collections dropped by other Chroma clients can still leave such rows; writing
a record again through vectorport removes any key it did not write where the upsert
reads first (collections of earlier versions, or that have held a document). Where it
does not (:mod:`.written`), a key no vectorport writer listed stays until the record is
deleted (which removes its list rows) and written again.
"""

from __future__ import annotations

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from vectorport.adapters.chroma.errors import is_not_found

DELETE_CHUNK = 1_000


def clear_collection(collection: Collection) -> None:
    """Delete every record of ``collection``, record by record (see the module doc)."""
    while True:
        ids = collection.get(limit=DELETE_CHUNK, include=[])["ids"]
        if not ids:
            return
        collection.delete(ids=ids)


def drop_collection(client: ClientAPI, name: str) -> None:
    """Delete the records of collection ``name``, then the collection; absent is fine."""
    try:
        collection = client.get_collection(name, embedding_function=None)
        clear_collection(collection)
        client.delete_collection(name)
    except Exception as exc:
        if not is_not_found(exc):
            raise


def drop_all_collections(client: ClientAPI) -> None:
    """Drop every collection the client's database holds."""
    for collection in client.list_collections():
        drop_collection(client, collection.name)


__all__ = ["clear_collection", "drop_all_collections", "drop_collection"]
