"""The operation hooks' cost: ``memory://`` queries through a store with no plugin,
against the same store's adapter called directly, and with a do-nothing hook plugin.

With no plugin implementing the hooks the facade builds no event, reads no clock and
counts nothing (``Registry.has_operation_hooks``), so its figure should sit at the
facade's own validation cost; the plugin figure shows what a tracing or policy plugin
adds per call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import vectorport
from benchmarks.common import Figure, Options, Report, paired_medians

SECTION = "operation hooks"
RECORDS, DIM, CALLS = 2_000, 64, 300


class _NoOpPlugin:
    @vectorport.hookimpl
    def vectorport_before_operation(self, event: Any) -> None:
        return None

    @vectorport.hookimpl
    def vectorport_after_operation(self, event: Any, error: Any, seconds: float) -> None:
        return None


def _store(registry: vectorport.Registry) -> vectorport.Index:
    store = vectorport.connect("memory://", registry=registry)
    index = store.create_index("hooks", DIM, "cosine")
    rng = np.random.default_rng(0)
    index.upsert([(f"r{i}", rng.normal(size=DIM), {"i": i}) for i in range(RECORDS)])
    return index


def run(report: Report, options: Options) -> None:
    queries = np.random.default_rng(1).normal(size=(CALLS, DIM)).astype(np.float32)
    plain = _store(vectorport.Registry())
    hooked_registry = vectorport.Registry()
    hooked_registry.register_plugin(_NoOpPlugin(), "no-op")
    hooked = _store(hooked_registry)
    adapter, spec = plain.store.adapter, plain.spec
    requests = [plain.prepare_query(q, top_k=10) for q in queries]

    def facade(index: vectorport.Index) -> Any:
        return lambda: [index.query(q, top_k=10) for q in queries]

    def direct() -> None:
        for request in requests:
            adapter.query(spec, request)

    repeats = max(3, options.repeats)
    with_none, raw = paired_medians(facade(plain), direct, repeats)
    report.add(Figure(SECTION, f"memory:// query, no plugin, vs the adapter called directly "
                      f"({CALLS} queries)", with_none, raw, "s", higher_is_better=False,
                      note="facade validation and result finishing, no hook work"))
    with_plugin, without = paired_medians(facade(hooked), facade(plain), repeats)
    report.add(Figure(SECTION, "memory:// query, a do-nothing hook plugin vs no plugin",
                      with_plugin, without, "s", higher_is_better=False))
    report.note(f"{SECTION}: with no plugin the facade skips the hooks entirely (no event, "
                "no clock); the first figure is the facade's own validation, not hooks")
