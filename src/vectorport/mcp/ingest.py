"""``--ingest NAME=FOLDER``: fill an index from a folder's text files at startup.

For a store that starts empty (``memory://``) or to refresh one: each readable UTF-8
file becomes a source (its id the file's path within the folder, as a workspace names
it), chunked and embedded into ``NAME`` in the server's namespace, the index created at
the embedder's dimension when missing. Re-ingesting a file overwrites its chunks, so a
restart does not pile up copies.
"""

from __future__ import annotations

from dataclasses import dataclass

from vectorport.chunks.chunked import ChunkedIndex
from vectorport.chunks.splitting import Chunker
from vectorport.core.errors import ConfigError
from vectorport.core.store import Store
from vectorport.embedders.base import Embedder
from vectorport.workspace.filesystem import LocalFilesystem

MAX_FILE_BYTES = 2_000_000
"""Larger files are skipped: a folder of documents, not of data dumps."""


@dataclass(frozen=True, slots=True)
class IngestSpec:
    """One ``--ingest NAME=FOLDER``."""

    index: str
    folder: str

    @classmethod
    def parse(cls, text: str) -> IngestSpec:
        name, sep, folder = text.partition("=")
        if not sep or not name or not folder:
            raise ConfigError(f"--ingest takes INDEX=FOLDER, got {text!r}")
        return cls(name, folder)


def ingest_folder(store: Store, spec: IngestSpec, embedder: Embedder, *, namespace: str = "",
                  chunker: Chunker | None = None) -> list[str]:
    """Ingest the folder's files into ``spec.index``; returns the source ids, sorted."""
    filesystem = LocalFilesystem(spec.folder)
    if not filesystem.base_path.is_dir():
        raise ConfigError(f"--ingest {spec.index}=…: {spec.folder!r} is not a folder")
    if not store.has_index(spec.index):
        if embedder.dimension is None:
            raise ConfigError(f"cannot create index {spec.index!r}: the embedder's dimension "
                              "is not known before its first call")
        store.create_index(spec.index, dimension=embedder.dimension)
    chunks = ChunkedIndex(store.index(spec.index), namespace=namespace)
    sources: list[str] = []
    for path in sorted(filesystem.select(["."]).paths):
        data = filesystem.read_bytes(path)
        if len(data) > MAX_FILE_BYTES:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # not a text file
        if not text.strip():
            continue
        chunks.ingest(path, text, embedder, chunker=chunker)
        sources.append(path)
    return sources
