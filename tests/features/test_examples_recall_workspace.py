"""Every recall and workspace example runs, as a script, against the embedded default.

The scripts use ``memory://`` stores or ``local://`` files in temporary folders, and run
as separate processes (started together) with ``XDG_DATA_HOME`` in a temporary folder
and no ``VECTORPORT_URL`` or ``DATABASE_URL``, so nothing touches the user's data. Each
script checks its own claims with ``assert`` and ends by printing ``ok``; here we also
check a few lines of what it shows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.support.examples_runner import check_example, run_examples

ROOT = Path(__file__).resolve().parents[2] / "examples"

EXPECTED_OUTPUT: dict[str, list[str]] = {
    "recall/basic.py": [
        "processor: semantic-recall / SemanticRecall",
        "index: recall_hashing_embedder_384",
        "[2024-05-01 09:02 UTC] user: Yes. My favourite coffee order is a flat white",
    ],
    "recall/advanced.py": [
        "  -> assistant: You like a flat white.",
        "  -> assistant: I don't know yet.",
        "messages stored in 'breakfast': 4",
    ],
    "recall/cross_thread.py": [
        'Conversation "Kitchen renovation" (thread kitchen), from 2024-05-01 09:00 UTC:',
        "[memory]  assistant The plumber is booked for Friday at 10.",
    ],
    "recall/thread_scope.py": ["[memory]  user      The marketing budget is 40 thousand euros."],
    "workspace/bm25.py": ["1.000  /notes/todo.txt  lines 2-2", "1.000  /docs/auth/flow.md"],
    "workspace/vector.py": ["indexed 5 files with 5 embedder calls", "/support/faq/password.txt"],
    "workspace/batch_embedder.py": ["indexed 13 files in batches of [4, 4, 4, 1]",
                                    "best match: /docs/changelog-7.md"],
    "workspace/hybrid.py": ["modes: ('bm25', 'vector', 'hybrid') default: hybrid",
                            "(vector 0.426, bm25 1.000)"],
    "workspace/custom_index_name.py": [
        "search index: my_workspace_vectors -> vectorport index: my_workspace_vectors",
        "refused: invalid search index name 'my-workspace'"],
    "workspace/manual_index.py": ["category = api:", "/records/ticket-42"],
    "workspace/auto_index.py": ["first run:  5 indexed",
                                "second run: ('/docs/api.md',) indexed, 3 unchanged, 1 removed"],
    "workspace/search.py": ["/support/faq/password.txt: 0.790",
                            "bm25   'config.yaml'", "-> /notes/todo.txt"],
}


def test_every_example_is_listed() -> None:
    scripts = {f"{p.parent.name}/{p.name}" for folder in ("recall", "workspace")
               for p in (ROOT / folder).glob("*.py") if not p.name.startswith("_")}
    assert scripts == set(EXPECTED_OUTPUT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    return run_examples(ROOT, EXPECTED_OUTPUT, tmp_path_factory.mktemp("examples"))


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_example_runs(runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    check_example(runs[name], EXPECTED_OUTPUT[name], name)
