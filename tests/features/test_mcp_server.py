"""``vectorport mcp`` end to end: the MCP SDK's own client talks to the server process.

A local store is filled first; the server is ``python -m vectorport mcp local://…``
over stdio (and once over streamable HTTP). Every answer is compared with the Python
objects the server wraps — the query tool, :class:`ChunkedIndex`, :class:`Workspace` —
called on the same store in this process.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import vectorport
from vectorport.agent import RequestContext, create_vector_query_tool
from vectorport.chunks import ChunkedIndex, Chunker, NavigationDirection
from vectorport.embedders import HashingEmbedder
from vectorport.mcp.chunk_tools import chunk_dict
from vectorport.mcp.ingest import IngestSpec, ingest_folder
from vectorport.workspace import Workspace

SOURCES = {
    "acme-guide": ("acme", 2024, ["setup", "howto"],
                   "To create an index call create_index with a name and a dimension. "
                   "Upsert records with ids, vectors and metadata. Query with a vector and "
                   "a filter; results come back best first with their scores."),
    "acme-faq": ("acme", 2022, ["faq"],
                 "Why is my query slow? Raise ef for better recall or lower it for speed. "
                 "Filters are Mongo style and the same on every backend."),
    "zeta-plans": ("zeta", 2025, ["secret"],
                   "Zeta's private roadmap: create an index for every customer and query it "
                   "with the customer's filter. Nobody at acme may read this."),
}
CHUNKER = Chunker(size=70)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"local://{tmp_path_factory.mktemp('mcp') / 'store.db'}"
    model = HashingEmbedder()
    with vectorport.connect(url) as store:
        index = store.create_index("docs", dimension=model.dimension)
        chunks = ChunkedIndex(index)
        for source, (tenant, year, tags, text) in SOURCES.items():
            chunks.ingest(source, text, model, chunker=CHUNKER,
                          metadata={"tenant": tenant, "year": year, "tags": tags})
        other = ChunkedIndex(index, namespace="ns2")
        other.ingest("ns2-note", "A note that lives in namespace ns2 about indexes.", model,
                     chunker=CHUNKER, metadata={"tenant": "acme", "year": 2023, "tags": ["note"]})
    return url


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "reset.md").write_text("Intro\nTo reset your password open Settings.\n")
    (root / "billing.md").write_text("Invoices are sent monthly by email.\n")
    return root


def server_args(url: str, *flags: str) -> list[str]:
    return ["-m", "vectorport", "mcp", url, "--index", "docs", *flags]


@asynccontextmanager
async def stdio_session(url: str, *flags: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=server_args(url, *flags))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def python_tool(store: vectorport.Store) -> Any:
    return create_vector_query_tool(model=HashingEmbedder(), vector_store=store,
                                    index_name="docs", enable_filter=True)


async def call(session: ClientSession, name: str, arguments: Mapping[str, Any]) -> Any:
    result = await session.call_tool(name, dict(arguments))
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content  # the same answer twice
    return result.structured_content


async def call_error(session: ClientSession, name: str, arguments: Mapping[str, Any]) -> str:
    result = await session.call_tool(name, dict(arguments))
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


def python_error(fn: Any, *args: Any) -> str:
    with pytest.raises(vectorport.VectorportError) as raised:
        fn(*args)
    return str(raised.value)


async def test_stdio_tools_answer_like_the_python_objects(store_url: str, folder: Path) -> None:
    queries = [
        {"query_text": "how do I create an index?", "top_k": 3},
        {"query_text": "slow query recall", "filter": {"year": {"$lt": 2023}}},
        {"query_text": "create index", "top_k": 5, "filter": {"tags": {"$in": ["setup", "faq"]}}},
        {"query_text": "roadmap", "filter": '{"tenant": "zeta"}', "options": {"min_score": 0.1}},
    ]
    bad_inputs = [
        {"query_text": "x", "filter": {"year": {"$bogus": 1}}},
        {"query_text": "x", "filter": {"$and": {"year": 1}}},
        {"query_text": "x", "filter": "{not json"},
        {"query_text": "x", "top_k": 1000},
        {"query_text": ""},
        {"query_text": "x", "limit": 3},
    ]
    async with stdio_session(store_url, "--workspace", str(folder)) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        answers = [await call(session, "search_docs", q) for q in queries]
        errors = [await call_error(session, "search_docs", q) for q in bad_inputs]
        option_error = await call_error(session, "search_docs",
                                        {"query_text": "x", "options": {"namespace": "ns2"}})
        navigation = {
            "navigate": await call(session, "navigate", {
                "source_id": "acme-guide", "start_offset": 0, "end_offset": 70,
                "direction": "next", "top_k": 2}),
            "read": await call(session, "read", {"source_id": "acme-faq", "start_offset": 0,
                                                 "end_offset": 10_000}),
            "get_chunk": await call(session, "get_chunk", {"chunk_id": "acme-guide#000001"}),
            "grep": await call(session, "grep", {"source_id": "acme-guide",
                                                 "pattern": "(?i)query", "mode": "regex"}),
        }
        missing = await call_error(session, "read", {"source_id": "nobody", "start_offset": 0,
                                                     "end_offset": 5})
        bad_direction = await call_error(session, "navigate", {
            "source_id": "acme-guide", "start_offset": 0, "end_offset": 5, "direction": "up"})
        workspace = await call(session, "workspace_search", {"query": "reset password",
                                                             "top_k": 2})

    assert set(tools) == {"search_docs", "navigate", "read", "get_chunk", "grep",
                          "workspace_search"}
    schema = tools["search_docs"].input_schema
    assert set(schema["properties"]) == {"query_text", "top_k", "filter", "options"}
    described = schema["properties"]["filter"]["description"]
    for field in ("tenant (string)", "year (number)", "tags (list of strings)",
                  "source_id (string)"):
        assert field in described
    assert "acme" not in described  # names and kinds, never values

    with vectorport.connect(store_url) as store:
        tool = python_tool(store)
        for query, answer in zip(queries, answers, strict=True):
            args = {k: v for k, v in query.items() if k != "options"}
            ctx = ({"database_config": {"local": query["options"]}} if "options" in query
                   else None)
            assert answer == tool.execute(args, ctx).to_dict()
        assert answers[0]["sources"], "the search found nothing: a vacuous comparison"
        for bad, error in zip(bad_inputs, errors, strict=True):
            assert error == python_error(tool.execute, bad)
        assert "unknown option(s) ['namespace']" in option_error

        chunks = ChunkedIndex(store.index("docs"))
        expected = {
            "navigate": chunks.navigate("acme-guide", 0, 70, NavigationDirection.NEXT, top_k=2),
            "read": chunks.read("acme-faq", 0, 10_000),
            "grep": chunks.grep("acme-guide", "(?i)query", mode="regex"),  # type: ignore[arg-type]
        }
        for name, found in expected.items():
            assert navigation[name] == {"chunks": [chunk_dict(c) for c in found]}, name
            assert found
        chunk = chunks.get_chunk("acme-guide#000001")
        assert chunk is not None and navigation["get_chunk"] == {"chunk": chunk_dict(chunk)}
        assert missing == python_error(chunks.read, "nobody", 0, 5)
        assert "direction must be" in bad_direction

        ws = Workspace(folder, bm25=True, vector_store=store, embedder=HashingEmbedder(),
                       auto_index_paths=["."])
        ws.sync()
        hits = ws.search("reset password", top_k=2)
        assert [(r["id"], r["content"]) for r in workspace["results"]] == \
            [(h.id, h.content) for h in hits]
        assert [r["score"] for r in workspace["results"]] == pytest.approx([h.score for h in hits])


async def test_stdio_scope_filter_only_narrows(store_url: str) -> None:
    scope = {"tenant": "acme"}
    hostile = [
        None,
        {"tenant": "zeta"},
        {"$or": [{"tenant": "zeta"}, {"year": {"$gte": 0}}]},
        {"$not": {"tenant": "acme"}},
        {"tenant": {"$ne": "acme"}},
        {"$nor": [{"tenant": "acme"}]},
    ]
    async with stdio_session(store_url, "--filter", json.dumps(scope)) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        answers = []
        for node in hostile:
            args: dict[str, Any] = {"query_text": "create an index and query it", "top_k": 10}
            if node is not None:
                args["filter"] = node
            answers.append(await call(session, "search_docs", args))
        other_chunk = await call(session, "get_chunk", {"chunk_id": "zeta-plans#000000"})
        own_chunk = await call(session, "get_chunk", {"chunk_id": "acme-faq#000000"})
        other_read = await call_error(session, "read", {"source_id": "zeta-plans",
                                                        "start_offset": 0, "end_offset": 999})
        other_grep = await call_error(session, "grep", {"source_id": "zeta-plans",
                                                        "pattern": "roadmap"})

    with vectorport.connect(store_url) as store:
        tool = python_tool(store)
        chunks = ChunkedIndex(store.index("docs"))
        for node, answer in zip(hostile, answers, strict=True):
            args = {"query_text": "create an index and query it", "top_k": 10}
            if node is not None:
                args["filter"] = node
            assert answer == tool.execute(args, RequestContext(filter=scope)).to_dict()
            assert all(s["metadata"]["tenant"] == "acme" for s in answer["sources"])
        assert answers[0]["sources"]
        assert other_chunk == {"chunk": None}
        assert chunks.get_chunk("zeta-plans#000000") is not None  # it exists, out of scope
        assert own_chunk["chunk"]["source_id"] == "acme-faq"
        assert other_read == other_grep == python_error(chunks.read, "no-such-source", 0, 1) \
            .replace("no-such-source", "zeta-plans")
    described = tools["search_docs"].input_schema["properties"]["filter"]["description"]
    assert "tenant (string)" in described


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http_with_a_namespace_scope(store_url: str) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *server_args(store_url, "--transport", "http", "--port", str(port),
                                      "--namespace", "ns2")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:  # wait for the port, not for a fixed time
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                await anyio.sleep(0.2)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            answer = await call(session, "search_docs", {"query_text": "indexes", "top_k": 5})
            chunk = await call(session, "get_chunk", {"chunk_id": "ns2-note#000000"})
            outside = await call(session, "get_chunk", {"chunk_id": "acme-faq#000000"})
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
    assert {"search_docs", "navigate", "read", "get_chunk", "grep"} <= names
    with vectorport.connect(store_url) as store:
        tool = create_vector_query_tool(model=HashingEmbedder(), vector_store=store,
                                        index_name="docs", enable_filter=True,
                                        tenant_namespace=True)
        expected = tool.execute({"query_text": "indexes", "top_k": 5},
                                RequestContext(tenant_id="ns2")).to_dict()
    assert answer == expected
    assert [s["id"] for s in answer["sources"]] == ["ns2-note#000000"]
    assert chunk["chunk"]["source_id"] == "ns2-note"
    assert outside == {"chunk": None}  # the default namespace is out of scope


async def test_stdio_memory_store_filled_by_ingest(folder: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "vectorport", "mcp", "memory://", "--ingest", f"notes={folder}"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        answer = await call(session, "search_notes", {"query_text": "password", "top_k": 2})
        source = answer["sources"][0]["metadata"]["source_id"]
        read_back = await call(session, "read", {"source_id": source, "start_offset": 0,
                                                 "end_offset": 1000})
        bad = await call_error(session, "search_notes", {"query_text": "password",
                                                         "filter": {"$or": []}})
    store = vectorport.connect("memory://")
    ingest_folder(store, IngestSpec("notes", str(folder)), HashingEmbedder())
    tool = create_vector_query_tool(model=HashingEmbedder(), vector_store=store,
                                    index_name="notes", enable_filter=True)
    assert names == {"search_notes", "navigate", "read", "get_chunk", "grep"}
    assert answer == tool.execute({"query_text": "password", "top_k": 2}).to_dict()
    assert source.endswith("reset.md")  # the file that mentions passwords ranks first
    chunks = ChunkedIndex(store.index("notes"))
    assert read_back == {"chunks": [chunk_dict(c) for c in chunks.read(source, 0, 1000)]}
    assert read_back["chunks"]
    assert bad == python_error(tool.execute, {"query_text": "password", "filter": {"$or": []}})
