"""Behaviours of the emulators that the vendors' own SDK tests found to differ from the
services, and the fault switches for retry code (dropped answers, a stalled server).

Everything goes over real HTTP on loopback: the official SDKs where they expose the
behaviour, ``http.client`` where the point is the raw wire (status, headers, encoding).
"""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import uuid
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from vectorport.cli import build_parser
from vectorport.testing.emulators import pinecone as pinecone_emulator
from vectorport.testing.emulators import turbopuffer as tpuf_emulator
from vectorport.testing.emulators.fidelity import OUT_OF_SCOPE, load_suite
from vectorport.testing.emulators.http import EmulatorServer

turbopuffer = pytest.importorskip("turbopuffer")
pinecone = pytest.importorskip("pinecone")

KEY = "emulator-key"


def raw(server: EmulatorServer, method: str, path: str, body: Any = None,
        headers: dict[str, str] | None = None, timeout: float = 5.0
        ) -> http.client.HTTPResponse:
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    payload = body if isinstance(body, bytes) else (
        json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=payload, headers={
        "Authorization": f"Bearer {KEY}", "Api-Key": KEY, "Content-Type": "application/json",
        **(headers or {})})
    return conn.getresponse()


def tpuf_client(server: EmulatorServer) -> Any:
    return turbopuffer.Turbopuffer(api_key=KEY, base_url=server.url, max_retries=0)


# -- turbopuffer -----------------------------------------------------------------------------


def test_turbopuffer_float32_json_and_absent_attributes() -> None:
    with tpuf_emulator.running() as server:
        ns = tpuf_client(server).namespace(f"f-{uuid.uuid4().hex[:8]}")
        ns.write(upsert_rows=[{"id": 1, "vector": [0.7, 0.1], "a": "x"},
                              {"id": 2, "vector": [0.3, 0.2]}],
                 distance_metric="euclidean_squared")
        rows = ns.query(rank_by=("vector", "ANN", [0.0, 0.0]), top_k=2,
                        include_attributes=["vector", "a"]).rows
        by_id = {r.id: dict(r) for r in rows}
        # float32 values read back as their shortest round-trip decimal, as on the service
        assert by_id[1]["vector"] == [0.7, 0.1]
        # $dist is a float32 too: 0.3f² + 0.2f² in float32, printed shortest
        expected = float(str(np.float32(np.float32(0.3) ** 2 + np.float32(0.2) ** 2)))
        assert by_id[2]["$dist"] == expected
        # an attribute named in include_attributes but missing on a row is left out
        assert "a" in by_id[1] and "a" not in by_id[2]


def test_turbopuffer_parse_errors_are_422_in_serde_wording() -> None:
    with tpuf_emulator.running() as server:
        ns = tpuf_client(server).namespace(f"p-{uuid.uuid4().hex[:8]}")
        with pytest.raises(turbopuffer.UnprocessableEntityError,
                           match="invalid type: map, expected a sequence"):
            ns.write(upsert_rows={"id": 1, "vector": [1.0]})  # type: ignore[arg-type]
        bad = raw(server, "POST", "/v2/namespaces/x/query", b"{not json")
        assert bad.status == 422 and json.loads(bad.read())["status"] == "error"
        listed = raw(server, "POST", "/v2/namespaces/x/query", [1, 2])
        assert listed.status == 422
        assert "expected a map" in json.loads(listed.read())["error"]


def test_turbopuffer_in_with_one_value_on_an_array_attribute() -> None:
    with tpuf_emulator.running() as server:
        ns = tpuf_client(server).namespace(f"i-{uuid.uuid4().hex[:8]}")
        ns.write(upsert_rows=[{"id": 1, "vector": [1.0], "users": ["jan", "bojan"]},
                              {"id": 2, "vector": [1.0], "users": ["simon"]}],
                 distance_metric="euclidean_squared")
        rows = ns.query(rank_by=("id", "asc"), top_k=5, filters=("users", "In", "bojan")).rows
        assert [r.id for r in rows] == [1]


def test_turbopuffer_gzip_timings_and_refusals() -> None:
    with tpuf_emulator.running() as server:
        client = tpuf_client(server)
        ns = client.namespace(f"g-{uuid.uuid4().hex[:8]}")
        ns.write(upsert_rows=[{"id": i, "vector": [0.1] * 512} for i in range(4)],
                 distance_metric="euclidean_squared")
        body = {"rank_by": ["vector", "ANN", [0.1] * 512], "top_k": 4,
                "include_attributes": True}
        big = raw(server, "POST", f"/v2/namespaces/{ns.id}/query", body,
                  {"Accept-Encoding": "gzip"})
        assert big.getheader("Content-Encoding") == "gzip"
        assert len(json.loads(gzip.decompress(big.read()))["rows"]) == 4
        plain = raw(server, "POST", f"/v2/namespaces/{ns.id}/query", body)
        assert plain.getheader("Content-Encoding") is None
        performance = ns.query(rank_by=("id", "asc"), top_k=1).performance
        assert performance.server_total_ms >= 1 and performance.query_execution_ms >= 1
        with pytest.raises(turbopuffer.BadRequestError, match="does not implement"):
            ns.recall()
        with pytest.raises(turbopuffer.BadRequestError, match="does not implement stemming"):
            ns.write(upsert_rows=[{"id": 9, "vector": [0.1] * 512, "t": "a"}],
                     schema={"t": {"type": "string",
                                   "full_text_search": {"stemming": True}}})


# -- pinecone --------------------------------------------------------------------------------


def test_pinecone_namespaces_api_and_unserved_routes() -> None:
    with pinecone_emulator.running() as server:
        pc = pinecone.Pinecone(api_key=KEY, host=server.url)
        pc.indexes.create(name="ns-index", dimension=2, metric="dotproduct")
        index = pc.index(name="ns-index")
        for name in ("a-1", "a-2", "a-3", "b-1"):
            index.create_namespace(name=name)
        with pytest.raises(pinecone.errors.ConflictError):
            index.create_namespace(name="a-1")
        # empty namespaces exist, with a record count of 0
        assert index.describe_namespace(name="b-1").record_count == 0
        first = raw(server, "GET", "/data/ns-index/namespaces?prefix=a-&limit=2")
        page = json.loads(first.read())
        assert [n["name"] for n in page["namespaces"]] == ["a-1", "a-2"]
        token = page["pagination"]["next"]
        rest = json.loads(raw(server, "GET", "/data/ns-index/namespaces?prefix=a-&limit=2"
                                             f"&paginationToken={token}").read())
        assert [n["name"] for n in rest["namespaces"]] == ["a-3"]
        assert "pagination" not in rest
        # sparse values on a dense dotproduct index created with dimension/metric
        index.upsert(vectors=[{"id": "h", "values": [1.0, 0.0],
                               "sparse_values": {"indices": [3], "values": [0.5]}}],
                     namespace="a-1")
        assert index.describe_namespace(name="a-1").record_count == 1
        # an unserved route answers in Pinecone's error format, saying it is not emulated
        answer = raw(server, "POST", "/data/ns-index/records/namespaces/a-1/search", {})
        error = json.loads(answer.read())
        assert answer.status == 400 and "does not implement" in error["message"]
        control = raw(server, "GET", "/collections")
        assert "does not implement" in json.loads(control.read())["error"]["message"]


# -- fault switches --------------------------------------------------------------------------


def test_dropped_response_after_the_write_was_applied() -> None:
    with tpuf_emulator.running(drop_rate=1.0) as server:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            raw(server, "POST", "/v2/namespaces/drop", {
                "upsert_rows": [{"id": 1, "vector": [1.0]}],
                "distance_metric": "euclidean_squared"})
        server.faults.drop_rate = 0.0
        rows = tpuf_client(server).namespace("drop").query(rank_by=("id", "asc"), top_k=5).rows
        assert [r.id for r in rows] == [1]  # the write had been applied


def test_stalled_server_accepts_and_never_answers() -> None:
    with pinecone_emulator.running(stall=True) as server:
        with pytest.raises((TimeoutError, socket.timeout)):
            raw(server, "GET", "/indexes", timeout=0.5)
        server.faults.stall = False
        assert raw(server, "GET", "/indexes").status == 200


def test_cli_exposes_drop_rate_and_stall() -> None:
    args = build_parser().parse_args(["emulator", "turbopuffer", "--drop-rate", "0.25",
                                      "--stall"])
    assert args.drop_rate == 0.25 and args.stall is True


def test_out_of_scope_list_gives_a_reason_for_every_entry() -> None:
    for vendor in ("pinecone", "turbopuffer"):
        suite = load_suite(vendor, OUT_OF_SCOPE)
        assert suite.files
        assert all(reason.strip() for _, reason in
                   (*suite.out_of_scope, *suite.expected_failures))
