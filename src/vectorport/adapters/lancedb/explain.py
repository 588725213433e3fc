"""``explain`` for LanceDB, and the one pure builder of the search settings.

:func:`prepare_query` is what :meth:`LanceDBAdapter.query` applies to each
``table.search(...)`` (the SQL ``where``, prefiltered; the selected columns; exact or
ANN with ``nprobes``/``ef``/``refine_factor``); :func:`explain_query` shows the same
value. LanceDB takes the ``where`` as SQL text with its literals inline, so it is shown
as sent, the query vector by its kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from vectorport.adapters.lancedb.filters import compile_filter, scoped
from vectorport.adapters.lancedb.options import query_options
from vectorport.adapters.lancedb.ranking import first_depth
from vectorport.core.types import Explanation, IndexSpec, QueryRequest

BACKEND = "lancedb"
DISTANCE_TYPES = {"cosine": "cosine", "dotproduct": "dot", "euclidean": "l2"}


@dataclass(frozen=True, slots=True)
class LanceQuery:
    """The settings of every search of one query (only ``limit`` and ``ef`` vary)."""

    where: str
    columns: tuple[str, ...]
    distance_type: str
    exact: bool
    nprobes: int | None
    ef: int | None
    refine_factor: int | None

    def ef_at(self, depth: int) -> int | None:
        """HNSW ``ef`` for a search ``depth`` deep (never below the depth asked for)."""
        return None if self.ef is None else max(self.ef, depth)


def prepare_query(index: IndexSpec, request: QueryRequest, columns: list[str]) -> LanceQuery:
    """Raises before any I/O on unknown or invalid ``backend_options.lancedb``."""
    options = query_options(request.options_for(BACKEND))
    return LanceQuery(
        where=scoped(request.namespace, request.filter),
        columns=(*columns, "_distance"),
        distance_type=DISTANCE_TYPES[index.metric],
        exact=index.index_type in ("auto", "flat"),
        nprobes=request.probes if request.probes is not None else options.nprobes,
        ef=request.ef,
        refine_factor=options.refine_factor,
    )


def explain_query(index: IndexSpec, request: QueryRequest, columns: list[str]) -> Explanation:
    prepared = prepare_query(index, request, columns)
    depth = first_depth(request.top_k)
    chain = [f"table({index.name!r}).search(<float32[{index.dimension}]>, "
             f"vector_column_name='vector')",
             f".distance_type({prepared.distance_type!r})",
             f".where({prepared.where!r}, prefilter=True)",
             f".select({list(prepared.columns)!r})", f".limit({depth})"]
    settings: dict[str, str | int | float | bool | None] = {
        "search": "exact (bypass_vector_index)" if prepared.exact else "ann",
        "first_depth": depth, "consistency": request.consistency}
    if prepared.exact:
        chain.append(".bypass_vector_index()")
    else:
        if prepared.nprobes is not None:
            chain.append(f".nprobes({prepared.nprobes})")
            settings["nprobes"] = prepared.nprobes
        ef = prepared.ef_at(depth)
        if ef is not None:
            chain.append(f".ef({ef})")
            settings["ef"] = ef
        if prepared.refine_factor is not None:
            chain.append(f".refine_factor({prepared.refine_factor})")
            settings["refine_factor"] = prepared.refine_factor
    notes = [f"first search {depth} deep, four times deeper while the cut is tied; "
             "scores are recomputed exactly from the returned vectors"]
    if prepared.exact:
        notes.append("while the table has shown no row of another namespace, the search "
                     "is sent without the ns condition and the ns of every row returned "
                     "is checked (any other: searched again as shown)")
        notes.extend(f"{hint} does not apply: this index is searched exactly (not sent)"
                     for hint, value in (("ef", request.ef), ("probes", request.probes))
                     if value is not None)
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="lancedb", request="\n".join(chain),
        parameters=(f"float32[{index.dimension}]",),
        filter=compile_filter(request.filter) if request.filter is not None else None,
        settings=settings, notes=tuple(notes),
    )
