"""``Index.explain`` and ``vectorport explain`` on every backend.

Each backend's explanation is checked against what its own query path uses: the
settings of the call (``ef``/``probes`` where the backend takes them, consistency, the
first depth asked for under ties), and the compiled filter, which must equal what the
adapter's filter compiler produces for the same AST. The same queries then run, and
their answers must equal a brute-force reference (exact cosine in numpy and the
filter oracle), so the builders the query and explain now share still send the right
request. Nothing an explanation shows may hold the query vector or a credential, and
on pgvector (bound parameters) and Milvus (masked literals) no filter value either.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from tests.support import backends

import vectorport
from vectorport import Explanation, Filter, UnsupportedFeatureError, parse_filter
from vectorport.cli import main as cli_main
from vectorport.core.filters.oracle import matches

SECRET_TAG = "tag-value-7f3a9"
SECRET_YEAR = 2_031_977
QUERY_VECTOR = [0.123456789, 0.987654321, 0.5]
FILTER = {"tag": {"$in": [SECRET_TAG, "other"]}, "year": {"$gte": SECRET_YEAR}}
RECORDS = [
    (f"r{i}", [1.0, float(i % 4), 0.25 * i + 0.1],
     {"tag": SECRET_TAG if i % 2 else "other", "year": SECRET_YEAR + i - 3})
    for i in range(12)
]
INDEX = "explained"
NAMESPACE = "tenant_a"


@pytest.fixture(scope="module", params=backends.ALL, ids=lambda b: b.name)
def opened(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, vectorport.Store, vectorport.Index]]:
    backend: backends.Backend = request.param
    with backends.open_backend(backend, tmp_path_factory.mktemp(backend.name)) as url, \
            vectorport.connect(url) as store:
        if store.has_index(INDEX):
            store.delete_index(INDEX)
        # an ANN index where the backend has one, so that ef/probes reach the engine
        kinds = store.capabilities.index_types
        index_type = "hnsw" if "hnsw" in kinds else "auto"
        index = store.create_index(INDEX, dimension=3, index_type=index_type)
        index.upsert(RECORDS, namespace=NAMESPACE)
        yield url, store, index
        store.delete_index(INDEX)


def hints(store: vectorport.Store) -> dict[str, int]:
    return {name: value for name, value in (("ef", 77), ("probes", 5))
            if name in store.capabilities.hints}


def secrets_of(store: vectorport.Store) -> list[str]:
    """Every credential the store was opened with (URL password, secret options, the
    emulators' key)."""
    found = [os.environ.get(backends.EMULATOR_KEY_ENV, "emulator-key")]
    url = store.url
    if url is not None:
        if url.password:
            found.append(url.password.reveal())
        found.extend(s.reveal() for s in url.secrets.values())
    return [s for s in found if s]


def everything(explanation: Explanation) -> str:
    return str(explanation) + json.dumps(explanation.to_dict())


def expected_ids(node: Filter, top_k: int) -> list[str]:
    """The reference answer: exact cosine over the records the oracle keeps."""
    q = np.asarray(QUERY_VECTOR, dtype=np.float64)
    scored = []
    for rid, vector, metadata in RECORDS:
        if matches(node, metadata):
            v = np.asarray(vector, dtype=np.float64)
            scored.append((-float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))), rid))
    return [rid for _, rid in sorted(scored)[:top_k]]


# -- the compiled filter, from each adapter's own compiler -------------------------------


def _pgvector(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.pgvector.filters import compile_filter

    return compile_filter(node).sql.as_string()


def _pinecone(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.pinecone.filters import compile_filter

    return json.dumps(compile_filter(node), sort_keys=True)


def _qdrant(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.qdrant.filters import compile_filter

    engine = store.adapter._engine  # type: ignore[attr-defined]
    return json.dumps(compile_filter(node, bools_native=engine.bools_native,
                                     numbers_exact=engine.numbers_exact), sort_keys=True)


def _chroma(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.chroma.filters import combine, compile_filter

    return json.dumps(combine(compile_filter(node)).where, sort_keys=True)


def _milvus(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.milvus.explain import mask_literals
    from vectorport.adapters.milvus.filters import compile_filter

    adapter: Any = store.adapter
    engine = adapter.engine
    return mask_literals(compile_filter(node, negation=engine.negation,
                                        encoded=engine.encoded_text,
                                        bounds_in_meta=adapter._bounds_in_meta(index.spec),
                                        filter_keys=adapter._filter_keys(index.spec)))[0]


def _turbopuffer(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    # The compiler needs the namespace's columns; the adapter's cached schema is what a
    # query compiles against too.
    adapter: Any = store.adapter
    return json.dumps(adapter._compile(adapter._native(index.spec, NAMESPACE), node))


def _lancedb(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    from vectorport.adapters.lancedb.filters import compile_filter

    return compile_filter(node)


def _reference(store: vectorport.Store, index: vectorport.Index, node: Filter) -> str:
    return json.dumps(vectorport.render_filter(node), sort_keys=True)


COMPILED: dict[str, Callable[[vectorport.Store, vectorport.Index, Filter], str]] = {
    "pgvector": _pgvector, "pinecone": _pinecone, "chroma": _chroma, "milvus": _milvus,
    "turbopuffer": _turbopuffer, "lancedb": _lancedb, "qdrant": _qdrant, "local": _reference,
}


# -- tests ---------------------------------------------------------------------------------


def test_explanation_names_the_settings_and_the_compiled_filter(opened: Any) -> None:
    _, store, index = opened
    used = hints(store)
    explanation = index.explain(QUERY_VECTOR, top_k=4, filter=FILTER, namespace=NAMESPACE,
                                **used)  # type: ignore[arg-type]
    assert (explanation.backend, explanation.index) == (store.backend, INDEX)
    assert (explanation.namespace, explanation.top_k) == (NAMESPACE, 4)
    assert explanation.request
    settings = {str(k): str(v) for k, v in explanation.settings.items()}
    for name, value in used.items():  # each hint shows with its value, or why it is unused
        assert str(value) in settings.values() or any(
            note.startswith(f"{name} does not apply") for note in explanation.notes
        ), (name, settings, explanation.notes)
    if "consistency" in settings:
        assert settings["consistency"].startswith("strong")
    assert explanation.filter == COMPILED[store.backend](store, index, parse_filter(FILTER))
    assert explanation.filter is not None and explanation.filter in everything(explanation)

    text = everything(explanation)
    assert "0.123456789" not in text and "0.98765" not in text  # the query vector
    for secret in secrets_of(store):
        assert secret not in text

    found = index.query(QUERY_VECTOR, top_k=4, filter=FILTER, namespace=NAMESPACE,
                        **used)  # type: ignore[arg-type]
    assert [m.id for m in found] == expected_ids(parse_filter(FILTER), 4)


def test_eventual_consistency_and_no_filter(opened: Any) -> None:
    _, store, index = opened
    explanation = index.explain(QUERY_VECTOR, top_k=3, namespace=NAMESPACE,
                                consistency="eventual")
    assert explanation.filter is None
    text = everything(explanation)
    if store.backend in ("pinecone", "turbopuffer", "chroma", "lancedb", "local"):
        assert "eventual" in text
    if store.backend == "milvus":
        assert explanation.settings["consistency_level"] == "Eventually"
    found = index.query(QUERY_VECTOR, top_k=3, namespace=NAMESPACE, consistency="eventual")
    assert [m.id for m in found] == expected_ids(parse_filter({}), 3)


def test_filter_values_never_shown_where_they_are_bound(opened: Any) -> None:
    _, store, index = opened
    if store.backend not in ("pgvector", "milvus"):
        pytest.skip("this backend's request document holds the filter values by design")
    explanation = index.explain(QUERY_VECTOR, top_k=4, filter=FILTER, namespace=NAMESPACE)
    text = everything(explanation)
    assert SECRET_TAG not in text and str(SECRET_YEAR) not in text
    assert NAMESPACE not in explanation.request  # the namespace is a value too
    if store.backend == "pgvector":
        assert len(re.findall(r"%s", explanation.request)) == len(explanation.parameters)
        assert explanation.parameters[0] == "vector(3)"
        assert set(explanation.parameters) <= {"vector(3)", "halfvec(3)", "text", "jsonb",
                                               "jsonpath", "integer", "float8", "jsonb[]"}
    else:
        assert explanation.request.count("?") == len(explanation.parameters)
        assert set(explanation.parameters) <= {"string", "int", "float", "bool"}


def test_pgvector_set_local_uses_the_hint(opened: Any) -> None:
    _, store, index = opened
    if store.backend != "pgvector":
        pytest.skip("pgvector only")
    explanation = index.explain(QUERY_VECTOR, top_k=5, ef=77, namespace=NAMESPACE)
    assert "SET LOCAL hnsw.ef_search = 77" in explanation.statements
    assert explanation.settings["hnsw.ef_search"] == "77"
    # below top_k HNSW would return fewer rows: the query raises it, and explain says so
    low = index.explain(QUERY_VECTOR, top_k=5, ef=2, namespace=NAMESPACE)
    assert "SET LOCAL hnsw.ef_search = 5" in low.statements
    plain = index.explain(QUERY_VECTOR, top_k=5, namespace=NAMESPACE)
    assert plain.statements == () and "hnsw.ef_search" not in plain.settings


def test_async_explain_is_the_sync_one(opened: Any) -> None:
    index = opened[2]

    async def explain() -> Explanation:
        return await vectorport.AsyncIndex(index).explain(
            QUERY_VECTOR, top_k=2, filter=FILTER, namespace=NAMESPACE)

    assert asyncio.run(explain()) == index.explain(QUERY_VECTOR, top_k=2, filter=FILTER,
                                                   namespace=NAMESPACE)


def test_explain_validates_like_query(opened: Any) -> None:
    _, store, index = opened
    with pytest.raises(vectorport.ValidationError):
        index.explain([1.0, 2.0], top_k=2)  # wrong dimension
    with pytest.raises(vectorport.FilterError):
        index.explain(QUERY_VECTOR, filter={"year": {"$bogus": 1}})
    if "ef" not in store.capabilities.hints:
        with pytest.raises(UnsupportedFeatureError):
            index.explain(QUERY_VECTOR, ef=10)


def _with_index(url: str, name: str) -> str:
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/{name}{query}"


def test_cli_prints_the_explanation(opened: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url, store, _ = opened
    if url.startswith("memory:"):
        pytest.skip("a memory:// store lives in one process: the CLI opens its own")
    args = ["explain", _with_index(url, INDEX), "--filter", json.dumps(FILTER), "--top-k",
            "4", "--namespace", NAMESPACE, "--json"]
    for name, value in hints(store).items():
        args += [f"--{name}", str(value)]
    assert cli_main(args) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["backend"] == store.backend and shown["top_k"] == 4
    assert shown["filter"] == COMPILED[store.backend](store, store.index(INDEX),
                                                      parse_filter(FILTER))
    for secret in secrets_of(store):
        assert secret not in json.dumps(shown)


def test_cli_reports_a_bad_filter(opened: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url, _, _ = opened
    if url.startswith("memory:"):
        pytest.skip("a memory:// store lives in one process")
    assert cli_main(["explain", _with_index(url, INDEX), "--filter", "{bad"]) == 1
    assert "--filter is not JSON" in capsys.readouterr().err


def test_an_adapter_without_the_hook_says_explain_is_not_available() -> None:
    pytest.importorskip("vectorport_dictstore")
    store = vectorport.connect("dictstore://")
    index = store.create_index("docs", dimension=2)
    assert not isinstance(store.adapter, vectorport.ExplainingAdapter)
    with pytest.raises(UnsupportedFeatureError, match="explain is not available") as caught:
        index.explain([1.0, 0.0])
    assert caught.value.backend == store.backend and caught.value.feature == "explain"
