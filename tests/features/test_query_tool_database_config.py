"""How ``database_config`` sections map onto vectorport's generic query options.

Pure mapping: no store is needed, so every backend's section is checked here, including
those of backends not installed on this machine.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from vectorport import ConfigError, FilterError, SparseVector
from vectorport.agent import SECTION_KEYS, QueryOptions, options_for_backend
from vectorport.core.filters.parse import parse_filter

MASTRA_PINECONE = {"pinecone": {
    "namespace": "production",
    "sparse_vector": {"indices": [0, 1, 2, 3], "values": [0.1, 0.2, 0.15, 0.05]},
}}
MASTRA_PGVECTOR = {"pgvector": {"min_score": 0.7, "ef": 200, "probes": 10}}
MASTRA_CHROMA = {"chroma": {"where": {"category": "technical", "status": "published"},
                          "where_document": {"$contains": "API"}}}
MASTRA_TURBOPUFFER = {"turbopuffer": {"consistency": "eventual"}}
MASTRA_MULTI = {"pinecone": {"namespace": "default"}, "pgvector": {"min_score": 0.8, "ef": 150},
              "chroma": {"where": {"type": "documentation"}}}


def test_pinecone_section() -> None:
    options = options_for_backend(MASTRA_PINECONE, "pinecone")
    assert options.namespace == "production"
    # the canonical sparse vector: values in float32, as every backend stores them
    assert options.sparse == SparseVector(
        (0, 1, 2, 3), tuple(float(np.float32(v)) for v in (0.1, 0.2, 0.15, 0.05)))
    assert options.query_kwargs() == {"namespace": "production"}


def test_pgvector_section() -> None:
    options = options_for_backend(MASTRA_PGVECTOR, "pgvector")
    assert options.query_kwargs() == {"min_score": 0.7, "ef": 200, "probes": 10}


def test_chroma_section() -> None:
    options = options_for_backend(MASTRA_CHROMA, "chroma")
    assert options.filter == parse_filter({"category": "technical", "status": "published"})
    assert options.query_kwargs() == {
        "backend_options": {"chroma": {"where_document": {"$contains": "API"}}}}


def test_turbopuffer_section() -> None:
    assert options_for_backend(MASTRA_TURBOPUFFER, "turbopuffer").query_kwargs() == {
        "consistency": "eventual"}


def test_milvus_section() -> None:
    options = options_for_backend(
        {"milvus": {"consistency": "strong", "ef": 64, "nprobe": 16, "namespace": "p1"}}, "milvus")
    assert options.query_kwargs() == {"consistency": "strong", "ef": 64, "probes": 16,
                                      "namespace": "p1"}


def test_local_section() -> None:
    options = options_for_backend({"local": {"namespace": "dev", "min_score": 0.25}}, "local")
    assert options.query_kwargs() == {"namespace": "dev", "min_score": 0.25}
    with pytest.raises(ConfigError, match="unknown key 'ef'"):
        options_for_backend({"local": {"ef": 10}}, "local")


def test_multi_config_reads_only_the_active_section() -> None:
    assert options_for_backend(MASTRA_MULTI, "pinecone").query_kwargs() == {"namespace": "default"}
    assert options_for_backend(MASTRA_MULTI, "pgvector").query_kwargs() == {"min_score": 0.8,
                                                                          "ef": 150}
    assert options_for_backend(MASTRA_MULTI, "chroma").filter == parse_filter(
        {"type": "documentation"})
    assert options_for_backend(MASTRA_MULTI, "local") == QueryOptions()
    assert options_for_backend(MASTRA_MULTI, "milvus") == QueryOptions()


def test_other_sections_are_not_validated() -> None:
    config = {"pinecone": {"anything": object()}, "local": {"namespace": "a"}}
    assert options_for_backend(config, "local").namespace == "a"


def test_no_config() -> None:
    assert options_for_backend(None, "local") == QueryOptions()
    assert options_for_backend({}, "local") == QueryOptions()
    assert options_for_backend({"local": {}}, "local") == QueryOptions()


def test_every_section_takes_namespace_and_min_score() -> None:
    for backend in SECTION_KEYS:
        options = options_for_backend({backend: {"namespace": "n", "min_score": 0}}, backend)
        assert (options.namespace, options.min_score) == ("n", 0.0)


@pytest.mark.parametrize(("backend", "section", "message"), [
    ("pinecone", {"sparseVector": {}}, "did you mean 'sparse_vector'"),
    ("pgvector", {"minScore": 0.5}, "did you mean 'min_score'"),
    ("chroma", {"whereDocument": {"$contains": "x"}}, "did you mean 'where_document'"),
    ("pgvector", {"lists": 5}, "unknown key 'lists'"),
    ("turbopuffer", {"ef": 5}, "unknown key 'ef'"),
    ("milvus", {"probes": 5}, "unknown key 'probes'"),
    ("pgvector", {"ef": 0}, "positive int"),
    ("pgvector", {"probes": True}, "positive int"),
    ("pgvector", {"min_score": "high"}, "finite number"),
    ("pgvector", {"min_score": float("nan")}, "finite number"),
    ("turbopuffer", {"consistency": "bounded"}, "'strong' or 'eventual'"),
    ("pinecone", {"namespace": 3}, "must be a str"),
    ("pinecone", {"namespace": "bad namespace!"}, "namespace"),
    ("pinecone", {"sparse_vector": {"indices": [1, 1], "values": [1, 2]}}, "unique"),
    ("pinecone", {"sparse_vector": [1, 2]}, "sparse_vector"),
    ("chroma", {"where": "category = x"}, "filter object"),
    ("chroma", {"where_document": {}}, "non-empty object"),
])
def test_bad_active_sections(backend: str, section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        options_for_backend({backend: section}, backend)


def test_a_bad_chroma_where_names_its_path() -> None:
    with pytest.raises(FilterError) as caught:
        options_for_backend({"chroma": {"where": {"year": {"$gt": True}}}}, "chroma")
    assert caught.value.path.startswith("database_config.chroma.where")


def test_section_name_in_the_wrong_case() -> None:
    with pytest.raises(ConfigError, match="did you mean 'pgvector'"):
        options_for_backend({"pgVector": {"ef": 10}}, "pgvector")


@pytest.mark.parametrize("config", [["pgvector"], "pgvector", {"pgvector": ["ef"]}])
def test_malformed_configs(config: Any) -> None:
    with pytest.raises(ConfigError):
        options_for_backend(config, "pgvector")


def test_a_third_party_backend_gets_generic_keys_and_its_own_section() -> None:
    options = options_for_backend(
        {"weaviate": {"namespace": "n", "ef": 32, "consistency": "eventual", "where": {"a": 1},
                    "hnsw_exact": True}}, "weaviate")
    assert options.query_kwargs() == {
        "namespace": "n", "ef": 32, "consistency": "eventual",
        "backend_options": {"weaviate": {"hnsw_exact": True}},
    }
    assert options.filter == parse_filter({"a": 1})


def test_query_kwargs_is_a_fresh_copy() -> None:
    options = options_for_backend(MASTRA_CHROMA, "chroma")
    kwargs = options.query_kwargs()
    kwargs["backend_options"]["chroma"]["where_document"] = "changed"
    assert options.query_kwargs()["backend_options"]["chroma"]["where_document"] == {
        "$contains": "API"}


def test_the_docs_table_names_every_section_and_its_keys() -> None:
    """docs/query_tool.md's table of sections has a row for each backend whose plugin
    declares its keys, and the row names each key that backend adds to the generic
    two (a backend added without its row, or a key without its mention, fails)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "query_tool.md").read_text()
    rows = {match.group(1): match.group(2)
            for match in re.finditer(r"^\| `(\w+)` \| (.*) \|$", text, re.MULTILINE)}
    for backend, keys in SECTION_KEYS.items():
        assert backend in rows, f"docs/query_tool.md has no row for {backend!r}"
        for key in set(keys) - {"namespace", "min_score"}:
            assert f"`{key}`" in rows[backend], f"{backend}: {key!r} is not in its row"
