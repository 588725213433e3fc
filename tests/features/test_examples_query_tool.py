"""Every query-tool example runs, as a script, against the embedded default store.

The scripts run as separate processes (started together, they take seconds in all),
with ``XDG_DATA_HOME`` in a temporary folder and no ``VECTORPORT_URL``, so nothing
touches the user's data. Each script checks its own claims with ``assert`` and ends by
printing ``ok``; here we also check a few lines of what it shows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.support.examples_runner import check_example, run_examples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "query_tool"

EXPECTED_OUTPUT: dict[str, list[str]] = {
    "basic.py": ["tool id:   VectorQuery local docs Tool", "tool name: VectorQuery_local_docs_Tool",
                 "Access the knowledge base to find information needed to answer user questions.",
                 "create-index"],
    "filters.py": ['results for {"version": {"$gt": 2.0}}:',
                   "published technical chunks: ['create-index', 'filters', 'namespaces']"],
    "reranking.py": ["vector order:", "reranked (top 5):", "semantic="],
    "custom_description.py": ["Search through document archives", "top source: policy"],
    "database_configs.py": [
        "pinecone     -> {'namespace': 'production'} sparse=SparseVector(indices=(0, 1, 2, 3)",
        "pgvector     -> {'min_score': 0.7, 'ef': 200, 'probes': 10}",
        "chroma       -> {'backend_options': {'chroma': {'where_document': {'$contains': 'API'}}}}",
        "turbopuffer  -> {'consistency': 'eventual'}",
        "on the local store:  {'namespace': 'v3', 'min_score': 0.05}",
        "did you mean 'min_score'?",
    ],
    "runtime_override.py": ["development:", "production:  ['deploy'"],
    "request_context.py": ["tool id: VectorQuery dynamic dynamic Tool",
                           "index_name is required"],
    "without_server.py": ['"vector": null', "best match: namespaces"],
    "multi_tenant.py": ["acme-corp: ['acme-1']", "globex: ['globex-1']",
                        "no tenant: 'tenant_id' is required", "async, globex: ['globex-1']"],
    "agent_loop.py": ["tool error: top_k must be a positive int",
                      "assistant: Create an index with store.create_index",
                      '"filter": {"version": {"$gt": 2.6}}'],
    "hybrid_bm25.py": ["hybrid results:", "deploy"],
}


def test_every_example_is_listed() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert scripts == set(EXPECTED_OUTPUT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    return run_examples(EXAMPLES, EXPECTED_OUTPUT, tmp_path_factory.mktemp("examples"))


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_example_runs(runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    check_example(runs[name], EXPECTED_OUTPUT[name], name)
