"""The capability matrix: features × backends, from declarations plus a conformance run.

``vectorport matrix`` runs the conformance bindings (``tests/backends/*/test_conformance.py`` and
the example third-party adapter) under pytest with a collector plugin, then writes
``docs/capabilities.md`` (and its colour-coded twin ``docs/capabilities.html``) and the
matrix section of ``README.md``. A cell says ``pass``
(declared, and every test of it passed), ``unsupported`` (not declared, and the suite
proved that it raises ``UnsupportedFeatureError``), or ``FAIL``. Tests join a row through
their ``@pytest.mark.feature(row, when=...)`` markers (the suite's rows are named in
:mod:`vectorport.conformance.base`), never through lists of test names here. Nothing in it is written
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

from vectorport.conformance.base import (
    BAD_INPUT,
    CONCURRENCY,
    CRUD,
    DIFFERENTIAL,
    FILTER_ROWS,
    HOSTILE,
    METRIC_ROWS,
    SCAN,
    filter_rows,
)
from vectorport.conformance.dataset import FILTER_CASES
from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities
from vectorport.core.plugin import default_registry
from vectorport.core.types import METRICS

README_START = "<!-- capability-matrix:start -->"
README_END = "<!-- capability-matrix:end -->"


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
    rows: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(matrix row, ``"declared"`` or ``"undeclared"``) → outcomes of the tests whose
    ``feature`` marker names that row for that case."""

    def record(self, name: str, outcome: str,
               rows: Iterable[tuple[str, str]] = ()) -> None:
        self.outcomes.setdefault(name, []).append(outcome)
        for row, when in rows:
            for case in (("declared", "undeclared") if when == "always" else (when,)):
                self.rows.setdefault((row, case), []).append(outcome)

    def status(self, row: str, case: str = "declared") -> str | None:
        """``passed``, ``failed`` or ``None`` when none of the row's tests ran."""
        seen = self.rows.get((row, case), [])
        if any(o == "failed" for o in seen):
            return "failed"
        if any(o == "passed" for o in seen):
            return "passed"
        return None


class Collector:
    """A pytest plugin gathering outcomes per binding class."""

    def __init__(self) -> None:
        self.bindings: dict[str, BindingResult] = {}
        self.features: dict[str, list[tuple[str, str]]] = {}
        """node id → the (row, when) pairs of its ``feature`` markers."""

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            rows = [(row, str(mark.kwargs.get("when", "declared")))
                    for mark in item.iter_markers("feature") for row in mark.args]
            cls = getattr(item, "cls", None)
            for base in getattr(cls, "__mro__", ()):
                rows.extend((row, "declared") for row in _PROTOCOL_ROWS.get(base.__name__, ()))
            self.features[item.nodeid] = rows

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
            binding.record(parts[-1], report.outcome, self.features.get(report.nodeid, ()))


def _label(cls: type) -> str:
    label: str = getattr(cls, "matrix_label", None) or cls.__name__.removeprefix("Test")
    return label


def sdk_distributions(backend: str) -> tuple[str, ...]:
    """The distributions describing ``backend``'s engine, from its plugin entry."""
    entry = default_registry().entries.get(backend)
    return entry.sdk_distributions if entry is not None else ()


def _sdk_versions(backend: str) -> str:
    parts = []
    for dist in sdk_distributions(backend):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(parts) or f"vectorport {importlib.metadata.version('vectorport')}"


_PROTOCOL_ROWS: dict[str, tuple[str, ...]] = {
    "NavigableConformance": ("chunk navigation (NavigableIndex)", "list ids"),
    "PatchableConformance": ("chunk patching (PatchableChunks)", "patch records"),
}
"""Rows of the chunk-protocol mixins (vectorport.conformance.protocols), by class: every
test of the mixin proves them. The suite's own tests carry ``feature`` markers."""


def _cell(binding: BindingResult, declared: bool, row: str) -> str:
    if declared:
        return {"passed": "pass", "failed": "FAIL", None: "not run"}[binding.status(row)]
    status = binding.status(row, "undeclared")
    return {"passed": "unsupported", "failed": "FAIL", None: "not offered"}[status]


def _ran(binding: BindingResult, row: str) -> bool:
    return binding.status(row) is not None


def feature_rows(binding: BindingResult) -> list[tuple[str, str]]:
    caps = binding.capabilities or Capabilities()
    rows: list[tuple[str, str]] = []
    rows.append(("engine / SDK", binding.engine or "?"))
    for row in ("index lifecycle", CRUD):
        rows.append((row, _cell(binding, True, row)))
    rows.append(("delete by filter", _cell(binding, caps.delete_by_filter, "delete by filter")))
    rows.append(("documents", _cell(binding, caps.documents, "documents")))
    for metric, row in zip(METRICS, METRIC_ROWS, strict=True):
        rows.append((row, _cell(binding, metric in caps.metrics, row)))
    for row in ("order, ties, top_k", "min_score (inclusive)"):
        rows.append((row, _cell(binding, True, row)))
    for op, row in zip(sorted(ALL_FILTER_OPERATORS), FILTER_ROWS, strict=True):
        cell = _cell(binding, op in caps.filter_operators, row)
        refused = sorted(name for name in binding.deviations
                         if name in FILTER_CASES and row in filter_rows(name))
        if cell == "pass" and refused:
            cell = f"pass, refuses {', '.join(refused)}"
        rows.append((row, cell))
    for row in (HOSTILE, BAD_INPUT, "namespaces isolated", SCAN):
        rows.append((row, _cell(binding, True, row)))
    rows.append(("sparse vectors", _cell(binding, caps.sparse, "sparse vectors")))
    hybrid = _cell(binding, caps.hybrid != "none", "hybrid dense + sparse")
    rows.append(("hybrid dense + sparse", f"{hybrid} ({caps.hybrid})" if caps.hybrid != "none"
                 else hybrid))
    for hint in ("ef", "probes"):
        rows.append((f"hint {hint}", _cell(binding, hint in caps.hints, f"hint {hint}")))
    for mode in ("strong", "eventual"):
        row = f"{mode} consistency"
        rows.append((row, _cell(binding, mode in caps.consistency, row)))
    for row in (DIFFERENTIAL, CONCURRENCY):
        rows.append((row, _cell(binding, True, row)))
    rows.append(("patch records", _cell(binding, caps.patch, "patch records")
                 if _ran(binding, "patch records")
                 else ("declared" if caps.patch else "not offered")))
    rows.append(("list ids", _cell(binding, caps.list_ids, "list ids")
                 if _ran(binding, "list ids")
                 else ("declared" if caps.list_ids else "not offered")))
    navigation = "chunk navigation (NavigableIndex)"
    rows.append((navigation, _cell(binding, True, navigation)))
    patch_status = binding.status("chunk patching (PatchableChunks)")
    rows.append(("chunk patching (PatchableChunks)",
                 "not run" if patch_status is None else "FAIL" if patch_status == "failed"
                 else "pass" if caps.patch else "not offered (proven)"))
    return rows


def merge_protocols(bindings: Sequence[BindingResult]) -> list[BindingResult]:
    """Suite columns, each with the outcomes of the protocol bindings of its backend."""
    suites = [b for b in bindings if b.kind == "suite"]
    for protocol in (b for b in bindings if b.kind == "protocols"):
        for suite in suites:
            if suite.backend == protocol.backend:
                for name, outcomes in protocol.outcomes.items():
                    suite.outcomes.setdefault(name, []).extend(outcomes)
                for key, outcomes in protocol.rows.items():
                    suite.rows.setdefault(key, []).extend(outcomes)
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
    from vectorport.matrix_html import write_html_from_markdown

    write_html_from_markdown(docs_path)
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
