"""Load rows into pgvector with LangChain's ``PGVector`` or LlamaIndex's ``PGVectorStore``.

Run by :mod:`benchmarks.competitors` as a script, in a separate virtualenv (these
packages pin an older ``pgvector`` than vectorport uses, so they do not share its
environment)::

    python competitors_worker.py {langchain|llamaindex} URI DATA.npz METADATA.json BATCH

Embeddings are precomputed (the ``.npz`` holds them): no model is ever called, and any
attempt to reach the network (a tokenizer or model download, telemetry) fails loudly,
because this script refuses every socket connection and name lookup that is not local.
Only the loading calls are timed, not the imports or the table creation. The result is
one JSON line on stdout: seconds, rows in the table afterwards, library versions.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
import sys
import time
from typing import Any

_LOCAL = {"127.0.0.1", "::1", "localhost", ""}


def forbid_network() -> None:
    """Refuse any non-local connection or DNS lookup made through Python's sockets
    (libpq's own Unix-socket connection to the database is not affected)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOCAL:
            raise OSError(f"benchmark worker: network access refused ({address!r})")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOCAL and host is not None:
            raise OSError(f"benchmark worker: name lookup refused ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo


def sqlalchemy_url(uri: str, driver: str) -> str:
    """``postgresql://user@/db?host=/socket/dir`` → ``postgresql+DRIVER://…``."""
    return uri.replace("postgresql://", f"postgresql+{driver}://", 1)


def count_rows(uri: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(uri) as conn:
        row = conn.execute(sql).fetchone()
        return int(row[0]) if row else 0


def langchain(uri: str, vectors: Any, ids: list[str], texts: list[str],
              metas: list[dict[str, Any]], batch: int) -> tuple[float, int, str]:
    from langchain_core.embeddings import Embeddings
    from langchain_postgres import PGVector

    class Precomputed(Embeddings):
        """Never called: the benchmark hands over precomputed embeddings."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("the benchmark must not compute embeddings")

        def embed_query(self, text: str) -> list[float]:
            raise RuntimeError("the benchmark must not compute embeddings")

    store = PGVector(embeddings=Precomputed(), connection=sqlalchemy_url(uri, "psycopg"),
                     collection_name="bench_ingest", embedding_length=vectors.shape[1],
                     pre_delete_collection=True, use_jsonb=True)
    start = time.perf_counter()
    for lo in range(0, len(ids), batch):
        hi = lo + batch
        store.add_embeddings(texts=texts[lo:hi], embeddings=vectors[lo:hi].tolist(),
                             metadatas=metas[lo:hi], ids=ids[lo:hi])
    seconds = time.perf_counter() - start
    rows = count_rows(uri, "SELECT count(*) FROM langchain_pg_embedding")
    return seconds, rows, f"langchain-postgres {importlib.metadata.version('langchain-postgres')}"


def llamaindex(uri: str, vectors: Any, ids: list[str], texts: list[str],
               metas: list[dict[str, Any]], batch: int) -> tuple[float, int, str]:
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.postgres import PGVectorStore

    store = PGVectorStore.from_params(
        connection_string=sqlalchemy_url(uri, "psycopg2"),
        async_connection_string=sqlalchemy_url(uri, "asyncpg"),
        table_name="bench_ingest", embed_dim=vectors.shape[1],
    )
    store.add([])  # creates the table (untimed)
    start = time.perf_counter()
    for lo in range(0, len(ids), batch):
        hi = lo + batch
        nodes = [TextNode(id_=i, text=t, embedding=v, metadata=m) for i, t, v, m in
                 zip(ids[lo:hi], texts[lo:hi], vectors[lo:hi].tolist(), metas[lo:hi],
                     strict=True)]
        store.add(nodes)
    seconds = time.perf_counter() - start
    rows = count_rows(uri, "SELECT count(*) FROM data_bench_ingest")
    version = importlib.metadata.version("llama-index-vector-stores-postgres")
    return seconds, rows, f"llama-index-vector-stores-postgres {version}"


LIBRARIES = {"langchain": langchain, "llamaindex": llamaindex}


def main() -> None:
    forbid_network()
    library, uri, data_path, meta_path, batch = sys.argv[1:6]
    import numpy as np

    with np.load(data_path) as data:
        vectors = data["vectors"]
        ids = [str(i) for i in data["ids"]]
        texts = [str(t) for t in data["texts"]]
    with open(meta_path, encoding="utf-8") as f:
        metas = json.load(f)
    seconds, rows, version = LIBRARIES[library](uri, vectors, ids, texts, metas, int(batch))
    print(json.dumps({"seconds": seconds, "rows": rows, "version": version}), flush=True)


if __name__ == "__main__":
    main()
