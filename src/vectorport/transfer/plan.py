"""What a copy will do, decided before anything is written.

The plan maps the source index's spec onto the destination (dimension, metric, sparse
vectors, the ANN structure where both sides mean the same by it) and lists every reason
the destination cannot hold the source. Record-level rules (ids, metadata sizes,
documents) are checked by :func:`precheck`, a read-only pass over the source that runs,
before any write, the destination's rules that are tighter than the source's
(:func:`tighter_rules`) — and is not needed at all when none is. docs/copy.md says why
that is enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vectorport.core.capabilities import Capabilities
from vectorport.core.errors import (
    IndexNotFoundError,
    UnsupportedFeatureError,
    ValidationError,
    VectorportError,
)
from vectorport.core.limits import check_record_limits
from vectorport.core.limits import tighter_rules as tighter_rules  # its home before core had it
from vectorport.core.requests import build_records
from vectorport.core.store import Index, Store
from vectorport.core.types import IndexSpec, Record

MAX_LISTED_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class NamespacePlan:
    name: str
    records: int


@dataclass(frozen=True, slots=True)
class CopyPlan:
    """The destination index to create or reuse, what is mapped, what is refused."""

    source_backend: str
    source: IndexSpec
    destination_backend: str
    destination: IndexSpec
    create: bool
    namespaces: tuple[NamespacePlan, ...]
    mapped: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def records(self) -> int:
        return sum(ns.records for ns in self.namespaces)

    def describe(self) -> str:
        src, dst = self.source, self.destination
        action = "create" if self.create else "reuse the existing"
        lines = [
            f"copy {self.source_backend}/{src.name} → {self.destination_backend}/{dst.name}",
            f"  {action} index {dst.name!r}: dimension {dst.dimension}, metric {dst.metric}, "
            f"sparse {'yes' if dst.sparse else 'no'}, index type {dst.index_type}",
            f"  {self.records} records in {len(self.namespaces)} namespace(s):",
            *(f"    {ns.name or '(default)'}: {ns.records}" for ns in self.namespaces),
            *(f"  mapped: {note}" for note in self.mapped),
            *(f"  refused: {problem}" for problem in self.problems),
        ]
        return "\n".join(lines)

    def raise_problems(self) -> None:
        if self.problems:
            raise UnsupportedFeatureError(
                self.destination_backend, "holding this index",
                "; ".join(self.problems) + " (nothing was written)")


def plan_copy(
    source: Index,
    destination: Store,
    *,
    destination_name: str | None = None,
    namespaces: Sequence[str] | None = None,
) -> CopyPlan:
    """Decide the destination spec and the namespaces; touches the destination only to
    read whether the index exists."""
    src = source.spec
    name = destination_name or src.name
    caps = destination.capabilities
    problems: list[str] = []
    mapped: list[str] = []
    if src.metric not in caps.metrics:
        problems.append(f"metric {src.metric!r} (it has {', '.join(sorted(caps.metrics))})")
    if src.sparse and not caps.sparse:
        problems.append("sparse vectors")
    if src.dimension > caps.max_dimension:
        problems.append(f"dimension {src.dimension} (at most {caps.max_dimension})")
    index_type, params = src.index_type, dict(src.index_params)
    if index_type != "auto" and index_type not in caps.index_types:
        mapped.append(f"index type {index_type!r} → the destination's default (auto)")
        index_type, params = "auto", {}
    if src.backend_options:
        mapped.append("backend_options of the source are not carried over")
    try:
        existing: IndexSpec | None = destination.describe_index(name).spec
    except IndexNotFoundError:
        existing = None
    if existing is not None and (existing.dimension, existing.metric, existing.sparse) != (
        src.dimension, src.metric, src.sparse
    ):
        problems.append(
            f"the existing index {name!r} has dimension {existing.dimension}, metric "
            f"{existing.metric}, sparse {existing.sparse}; the source has {src.dimension}, "
            f"{src.metric}, {src.sparse}")
    target = existing or IndexSpec(name=name, dimension=src.dimension, metric=src.metric,
                                   sparse=src.sparse, index_type=index_type,
                                   index_params=params)
    chosen = list(namespaces) if namespaces is not None else source.list_namespaces()
    counts = tuple(NamespacePlan(ns, source.count(ns)) for ns in chosen)
    return CopyPlan(source.store.backend, src, destination.backend, target, existing is None,
                    counts, tuple(mapped), tuple(problems))


def destination_handle(destination: Store, plan: CopyPlan) -> Index:
    """A handle that validates against the destination without any I/O (the index
    need not exist yet)."""
    spec = plan.destination
    if plan.create:
        spec = destination.build_spec(spec.name, spec.dimension, spec.metric,
                                      sparse=spec.sparse, index_type=spec.index_type,
                                      index_params=spec.index_params)
    return Index(destination, spec)


def precheck(
    pages: Iterable[tuple[str, Sequence[Record]]], handle: Index, rules: Capabilities | None,
) -> None:
    """Put every source record through the destination's record rules (``rules``: the
    tighter ones of :func:`tighter_rules`; ``None`` for the destination's whole
    validation, contract included); raise one error naming every problem found (up to
    :data:`MAX_LISTED_PROBLEMS`) before any write."""
    problems: list[str] = []
    backend, spec = handle.store.backend, handle.spec

    def check(records: Sequence[Record]) -> None:
        if rules is None:
            build_records(handle.target, records)
            return
        for record in records:
            if record.document is not None and not rules.documents:
                raise handle.store.unsupported("documents")
            check_record_limits(backend, rules, spec, record, "record")

    for namespace, records in pages:
        try:
            check(records)
        except VectorportError:
            # find each bad record of the page, not only the first
            for record in records:
                try:
                    check([record])
                except VectorportError as exc:
                    where = f"namespace {namespace!r}" if namespace else "the default namespace"
                    problems.append(f"{where}: {exc}")
                    if len(problems) >= MAX_LISTED_PROBLEMS:
                        break
        if len(problems) >= MAX_LISTED_PROBLEMS:
            break
    if problems:
        more = " (and possibly more)" if len(problems) >= MAX_LISTED_PROBLEMS else ""
        raise ValidationError(
            f"the destination ({backend}) cannot hold {len(problems)} source "
            f"record(s){more}; nothing was written:\n  " + "\n  ".join(problems))
