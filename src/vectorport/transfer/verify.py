"""Does the destination answer like the source? Counts, checksums, sample queries.

Per namespace: the record counts, and order-independent checksums of the canonical
records (:mod:`vectorport.transfer.canonical`) read by a full scan of each side (of the
source, taken during the copy itself when there is one). When the checksums agree with
float32 values included, the copies are the same bit for bit; otherwise a
record-by-record comparison (every source page fetched from the destination by id:
vectors within float32 rounding, everything else exact) names what differs. Then a
sample of the source's own vectors is queried on both sides: where both indexes search
exactly, the answers must agree (the same ids, scores within ``1e-4``, near-ties in
either order); where either side is approximate, recall@k of the destination against the
source is reported instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from vectorport.core.errors import ValidationError
from vectorport.core.store import Index
from vectorport.core.types import DenseVector, Match, Record
from vectorport.transfer.canonical import Checksum, same_record
from vectorport.transfer.readahead import read_ahead

SCORE_TOLERANCE = 1e-4


@dataclass(frozen=True, slots=True)
class NamespaceCheck:
    namespace: str
    source_count: int
    destination_count: int
    source_checksum: str
    destination_checksum: str
    missing: int = 0
    """Source records the destination does not have."""
    different: int = 0
    """Source records the destination holds otherwise."""

    @property
    def same(self) -> bool:
        return (self.source_count == self.destination_count and not self.missing
                and not self.different and self.source_checksum == self.destination_checksum)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    namespaces: tuple[NamespaceCheck, ...]
    queries: int
    exact: bool
    agreeing: int
    recall_at_k: float
    top_k: int

    @property
    def ok(self) -> bool:
        return all(n.same for n in self.namespaces) and (
            not self.exact or self.agreeing == self.queries)

    def describe(self) -> str:
        lines = []
        for n in self.namespaces:
            mark = "same" if n.same else "DIFFERENT"
            lines.append(f"  {n.namespace or '(default)'}: {n.source_count} → "
                         f"{n.destination_count} records, checksum {n.source_checksum[:12]}… "
                         f"→ {n.destination_checksum[:12]}…, {n.missing} missing, "
                         f"{n.different} different ({mark})")
        if self.queries:
            if self.exact:
                lines.append(f"  {self.agreeing}/{self.queries} sample queries give the same "
                             f"top {self.top_k}")
            else:
                lines.append(f"  recall@{self.top_k} of {self.queries} sample queries: "
                             f"{self.recall_at_k:.3f} (an approximate index on one side)")
        lines.append("verified: the destination holds exactly the source's records"
                     if self.ok else "verification FAILED")
        return "\n".join(lines)

    def raise_if_different(self) -> None:
        if not self.ok:
            raise ValidationError("the destination differs from the source:\n" + self.describe())


def tally(expected: Sequence[Record], destination: Index, namespace: str, missing: int,
          different: int) -> tuple[int, int]:
    """Add to the counts of ``expected`` records absent from, or different in,
    ``destination`` (fetched by id)."""
    got = destination.fetch([r.id for r in expected], namespace=namespace)
    for record in expected:
        other = got.get(record.id)
        if other is None:
            missing += 1
        elif not same_record(record, other):
            different += 1
    return missing, different


def is_exact(index: Index) -> bool:
    """Whether ``index`` answers queries by exhaustive search (the reference engine, or a
    flat index); other indexes may be approximate."""
    return index.store.backend == "local" or index.spec.index_type == "flat"


def _same_answer(a: list[Match], b: list[Match]) -> bool:
    if len(a) != len(b):
        return False
    if [m.id for m in a] == [m.id for m in b]:
        return all(abs(x.score - y.score) <= SCORE_TOLERANCE for x, y in zip(a, b, strict=True))
    # near-tied scores may come in either order, and either may be cut at top_k
    return bool(np.allclose([m.score for m in a], [m.score for m in b], atol=SCORE_TOLERANCE))


def _scan_sums(index: Index, namespace: str, page_size: int) -> Checksum:
    sums = Checksum()
    for page in read_ahead(index.scan(namespace, page_size=page_size)):
        sums.add_all(page.records)
    return sums


def _samples(source: Index, namespace: str, count: int) -> list[DenseVector]:
    """The first ``count`` vectors of a scan of the source: one small page."""
    for page in source.scan(namespace, page_size=count):
        return [r.vector for r in page.records[:count]]
    return []


def verify_indexes(
    source: Index,
    destination: Index,
    *,
    namespaces: Sequence[str] | None = None,
    sample_queries: int = 20,
    top_k: int = 10,
    page_size: int = 2000,
    source_checksums: Mapping[str, Checksum] | None = None,
) -> VerifyReport:
    """Compare ``destination`` with ``source`` namespace by namespace (every namespace of
    either side unless ``namespaces``).

    ``source_checksums`` are checksums of the source taken while it was read for a copy;
    a namespace that has one is not read again. The destination is read once: where its
    checksums (float32 values included) equal the source's, the two hold the same records
    bit for bit; otherwise every source record is fetched from the destination by id,
    which names the missing and different ones and forgives float32 rounding. The sample
    queries run on both sides while the scans do."""
    chosen = list(namespaces) if namespaces is not None else sorted(
        set(source.list_namespaces()) | set(destination.list_namespaces()))
    known = source_checksums or {}
    per_namespace = max(1, sample_queries // max(1, len(chosen)))
    samples: list[tuple[str, list[DenseVector]]] = []
    for ns in chosen:
        room = sample_queries - sum(len(v) for _, v in samples)
        if room > 0:
            samples.append((ns, _samples(source, ns, min(room, per_namespace))))
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="vectorport-verify") as pool:
        # mostly waiting on the engines, so it overlaps the scans below
        answers = [(pool.submit(_answers, source, ns, vectors, top_k),
                    pool.submit(_answers, destination, ns, vectors, top_k))
                   for ns, vectors in samples if vectors]
        checks = [_check(source, destination, ns, known.get(ns), page_size) for ns in chosen]
        pairs = [pair for want, got in answers
                 for pair in zip(want.result(), got.result(), strict=True)]
    exact = is_exact(source) and is_exact(destination)
    agreeing = sum(_same_answer(want, got) for want, got in pairs)
    found = sum(len({m.id for m in want} & {m.id for m in got}) for want, got in pairs)
    wanted = sum(len(want) for want, _ in pairs)
    recall = found / wanted if wanted else 1.0
    return VerifyReport(tuple(checks), len(pairs), exact, agreeing, recall, top_k)


def _answers(index: Index, namespace: str, vectors: list[DenseVector], top_k: int
             ) -> list[list[Match]]:
    # one batch: backends that answer many queries in one pass do
    return index.query_many(vectors, top_k=top_k, namespace=namespace, include_metadata=False,
                            include_documents=False)


def _check(source: Index, destination: Index, namespace: str, known: Checksum | None,
           page_size: int) -> NamespaceCheck:
    right = _scan_sums(destination, namespace, page_size)
    left = known or _scan_sums(source, namespace, page_size)
    missing = different = 0
    if not left.same_as(right):
        for page in read_ahead(source.scan(namespace, page_size=page_size)):
            missing, different = tally(page.records, destination, namespace, missing,
                                       different)
    return NamespaceCheck(namespace, left.count, right.count, left.hex, right.hex, missing,
                          different)
