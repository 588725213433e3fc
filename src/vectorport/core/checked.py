"""Records read from one store by the core, written to another without being validated
again: the trust boundary of a copy.

Every record a store gives back through a scan was stored through the contract: the
contract's own rules (id, metadata kinds and size, finite values and norm) and the source
backend's declared limits held when it was written. Validating it again for the
destination re-runs rules that cannot fail for it — most of a copy's write cost (the
metadata pass alone is ~5 µs a record). What can still refuse it is only what differs
between the two sides: the destination's index (dimension, metric, sparse vectors) and
the destination's declared rules tighter than the source's
(:func:`vectorport.core.limits.tighter_rules`). :func:`admit` runs exactly those.

A :class:`CheckedRecords` is never built by a caller: only :func:`checked_scan` issues
one, and :func:`admit` trusts only a value it issued (kept in a weak set, so a copy of
one, an instance made by hand or one of another process is not trusted and takes the
whole validation). Its records are a tuple of frozen :class:`Record` values; a caller
that changes one in place (its metadata dict) is outside the contract, as with any
value the core hands out.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from vectorport.core import batch_validation
from vectorport.core.errors import VectorportError
from vectorport.core.limits import check_record_limits, tighter_rules, vector_limits_hold
from vectorport.core.types import Record

if TYPE_CHECKING:
    from vectorport.core.requests import Target
    from vectorport.core.store import Index


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class CheckedRecords:
    """A page of a scan, with what the records were checked against when stored."""

    records: tuple[Record, ...]
    source: Target
    """The backend, the index's capabilities and its spec the records were read from."""
    next_cursor: str | None
    """The scan's token to resume after this page (as :class:`RecordPage`'s)."""

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


_ISSUED: weakref.WeakSet[CheckedRecords] = weakref.WeakSet()


def checked_scan(index: Index, namespace: str = "", *, page_size: int = 500,
                 cursor: str | None = None) -> Iterator[CheckedRecords]:
    """:meth:`Index.scan` of a whole namespace, its pages as :class:`CheckedRecords`
    that :meth:`Index.upsert_bulk` of another index takes without the contract's checks."""
    source = index.target
    for page in index.scan(namespace, page_size=page_size, cursor=cursor):
        issued = CheckedRecords(tuple(page.records), source, page.next_cursor)
        _ISSUED.add(issued)
        yield issued


def is_checked(value: object) -> TypeGuard[CheckedRecords]:
    """Whether ``value`` is a :class:`CheckedRecords` issued by :func:`checked_scan`."""
    return type(value) is CheckedRecords and value in _ISSUED


def admit(target: Target, batch: CheckedRecords) -> list[Record] | None:
    """The records of ``batch`` ready to write into ``target``, checked by every rule
    that can refuse them there; ``None`` when one might (then the whole validation runs,
    and gives the refusal its usual message and position).

    Checked here: the records' shape against the destination's index (dimension, a
    float32 vector, sparse vectors only into a sparse index), the vector rules when the
    destination's metric or limits could refuse a vector the source held, and the
    destination's declared rules tighter than the source's."""
    source, spec, caps = batch.source, target.spec, target.capabilities
    if source.spec.dimension != spec.dimension:
        return None
    dimension, sparse = spec.dimension, spec.sparse
    for record in batch.records:
        vector = record.vector
        if (type(vector) is not np.ndarray or vector.dtype != np.float32
                or vector.shape != (dimension,) or (record.sparse is not None and not sparse)):
            return None
    if not _vectors_hold(source, target, batch.records):
        return None
    rules = tighter_rules(source.capabilities, caps)
    if rules is not None:
        try:
            for position, record in enumerate(batch.records):
                if record.document is not None and not rules.documents:
                    return None
                check_record_limits(target.backend, rules, spec, record, f"record {position}",
                                    vector_checked=True)
        except VectorportError:
            return None
    # a scan gives each record once; a batch made of several pages might not
    if len({record.id for record in batch.records}) == len(batch.records):
        return list(batch.records)
    return None


def _vectors_hold(source: Target, target: Target, records: tuple[Record, ...]) -> bool:
    """Whether every vector passes the destination's vector rules. Nothing to compute
    when the metric is the same and the destination's vector limits are no tighter: the
    source held each vector to the same rules when it was stored."""
    mine, theirs = target.capabilities.limits, source.capabilities.limits
    same = (source.spec.metric == target.spec.metric
            and (mine.allow_zero_vector or not theirs.allow_zero_vector)
            and (mine.max_abs_value is None or (
                theirs.max_abs_value is not None and mine.max_abs_value >= theirs.max_abs_value)))
    if same or not records:
        return True
    stacked = batch_validation.stacked_vectors([r.vector for r in records])
    if stacked is None:
        return False
    matrix, min_squared_norm = stacked
    return vector_limits_hold(target.spec, mine, min_squared_norm,
                              float(np.abs(matrix).max()) if matrix.size else 0.0)
