"""``POST /v2/namespaces/{ns}/query``: ranking, filtering, attributes and aggregations.

Vector ranking is exhaustive (``ANN`` and ``kNN`` both return the exact nearest
neighbours, i.e. perfect recall). ``$dist`` is ``1 - cosine_similarity`` for
``cosine_distance`` and ``sum((q - x)^2)`` for ``euclidean_squared``, computed in float64
over the stored float32 values. Equal distances are ordered by id, which the service
does not promise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vectorport.testing.emulators.turbopuffer import text
from vectorport.testing.emulators.turbopuffer.filters import FilterCompiler, Predicate
from vectorport.testing.emulators.turbopuffer.namespace import Doc, Namespace
from vectorport.testing.emulators.turbopuffer.values import (
    MAX_LIMIT,
    ParseError,
    RequestError,
    coerce_value,
    float32_json,
    invalid_type,
    render_value,
)

QUERY_KEYS = frozenset({
    "rank_by", "top_k", "limit", "filters", "include_attributes", "exclude_attributes",
    "vector_encoding", "consistency", "aggregate_by", "group_by", "offset",
    "distance_metric", "rerank_by", "compute_attributes",
})
_FILTER_HEADS = frozenset({"And", "Or", "Not"})
_TEXT_HEADS = frozenset({"Sum", "Max", "Product"})
_NOT_EMULATED_HEADS = frozenset({"Attribute", "Saturate", "Decay", "Dist"})


def consistency_level(raw: object) -> str:
    if raw is None:
        return "strong"
    if not isinstance(raw, dict) or raw.get("level") not in ("strong", "eventual"):
        raise RequestError('consistency must be {"level": "strong"} or {"level": "eventual"}')
    extra = set(raw) - {"level", "max_staleness_seconds"}
    if extra:
        raise RequestError(f"unknown consistency option(s): {', '.join(sorted(extra))}")
    return str(raw["level"])


def _limit(body: dict[str, Any]) -> tuple[int | None, dict[str, Any] | None]:
    top_k, limit = body.get("top_k"), body.get("limit")
    if top_k is not None and limit is not None:
        raise RequestError("pass top_k or limit, not both")
    per = None
    if isinstance(limit, dict):
        extra = set(limit) - {"total", "per"}
        if extra or "total" not in limit:
            raise RequestError("limit takes {total, per}")
        per = limit.get("per")
        limit = limit["total"]
    total = top_k if top_k is not None else limit
    if total is None:
        return None, None
    if isinstance(total, bool) or not isinstance(total, int):
        raise invalid_type(total, "u32", "top_k" if top_k is not None else "limit")
    if total < 0:
        raise ParseError(f"{'top_k' if top_k is not None else 'limit'}: invalid value: "
                         f"integer `{total}`, expected u32")
    if total > MAX_LIMIT:
        raise RequestError(f"limit.total is at most {MAX_LIMIT}")
    if per is not None and (
        not isinstance(per, dict) or set(per) != {"attributes", "limit"}
        or not isinstance(per["attributes"], list) or not isinstance(per["limit"], int)
    ):
        raise RequestError("limit.per takes {attributes: [...], limit: n}")
    return total, per


@dataclass
class Ranked:
    """Documents in rank order, with ``$dist`` unless ordering by an attribute."""

    rows: list[tuple[Doc, float]]
    has_dist: bool


class QueryRunner:
    """Runs one (sub)query against one namespace view."""

    def __init__(self, namespace: Namespace, docs: dict[Any, Doc], vector_encoding: str) -> None:
        self.namespace = namespace
        self.docs = docs
        self.vector_encoding = vector_encoding
        self.compiler = FilterCompiler(namespace.schema, namespace.id_type)

    def run(self, body: dict[str, Any]) -> dict[str, Any]:
        unknown = set(body) - QUERY_KEYS
        if unknown:
            raise RequestError(f"unknown query parameter(s): {', '.join(sorted(unknown))}")
        for key in ("group_by", "rerank_by", "compute_attributes"):
            if body.get(key) is not None:
                raise RequestError(f"{key} is not emulated")
        metric = body.get("distance_metric")
        if metric is not None and metric != self.namespace.distance_metric:
            raise RequestError(
                f"distance_metric {metric} differs from the namespace's "
                f"{self.namespace.distance_metric}"
            )
        predicate = None
        if body.get("filters") is not None:
            predicate = self.compiler.compile(body["filters"])
        candidates = [d for d in self.docs.values() if predicate is None or predicate(d, None)]
        if body.get("aggregate_by") is not None:
            if body.get("rank_by") is not None or body.get("include_attributes") is not None:
                raise RequestError("aggregate_by cannot be combined with rank_by or "
                                   "include_attributes")
            return {"aggregations": self.aggregate(body["aggregate_by"], candidates)}
        if body.get("rank_by") is None:
            raise RequestError("rank_by is required unless aggregate_by is set")
        total, per = _limit(body)
        if total is None:
            raise RequestError("limit (or top_k) is required with rank_by")
        offset = body.get("offset", 0) or 0
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise RequestError("offset must be a non-negative integer")
        ranked = self.rank(body["rank_by"], candidates, predicate is not None)
        if per is not None:
            if ranked.has_dist:
                raise RequestError("limit.per is only supported when ordering by attributes")
            ranked.rows = _limit_per(ranked.rows, per)
        rows = ranked.rows[offset:offset + total]
        select = self.selector(body.get("include_attributes"), body.get("exclude_attributes"))
        out = []
        for doc, dist in rows:
            row: dict[str, Any] = {"id": doc["id"]}
            if ranked.has_dist:
                row["$dist"] = float32_json(dist)
            for name in select(doc):
                row[name] = render_value(doc.get(name), self.vector_encoding)
            out.append(row)
        return {"rows": out}

    # -- ranking ------------------------------------------------------------------

    def rank(self, rank_by: object, candidates: list[Doc], filtered: bool) -> Ranked:
        if not isinstance(rank_by, (list, tuple)):
            raise invalid_type(rank_by, "a sequence", "rank_by")
        if not rank_by:
            raise RequestError("rank_by must be a non-empty array")
        if len(rank_by) == 3 and rank_by[1] in ("ANN", "kNN"):
            if rank_by[1] == "kNN" and not filtered:
                raise RequestError("kNN queries require filters")
            return Ranked(self.rank_vector(rank_by[0], rank_by[2], candidates), True)
        if len(rank_by) >= 2 and rank_by[1] == "SparseKNN":
            raise RequestError("SparseKNN is not emulated")
        if isinstance(rank_by[0], (list, tuple)):
            if len(rank_by) != 1:
                raise RequestError("ordering by multiple attributes isn't implemented")
            rank_by = rank_by[0]
        if (len(rank_by) == 2 and isinstance(rank_by[0], str)
                and rank_by[1] in ("asc", "desc")):
            return Ranked(self.order_by(rank_by[0], rank_by[1], candidates), False)
        if rank_by[0] in _NOT_EMULATED_HEADS:
            raise RequestError(f"the {rank_by[0]} ranking operator is not emulated")
        score = self.score_expression(rank_by, candidates)
        scores = score(candidates)
        rows = [(d, float(s)) for d, s in zip(candidates, scores, strict=True) if s > 0]
        rows.sort(key=lambda p: (-p[1], _id_key(p[0]["id"])))
        return Ranked(rows, True)

    def rank_vector(self, name: object, raw: object, candidates: list[Doc]) -> list[tuple[Doc, float]]:
        if not isinstance(name, str):
            raise RequestError("rank_by: the first element names a vector attribute")
        schema = self.namespace.schema.get(name)
        if schema is None or not schema.is_vector:
            raise RequestError(f"rank_by: {name!r} is not a vector attribute of this namespace")
        if isinstance(raw, dict) or (isinstance(raw, list) and raw and isinstance(raw[0], list)):
            raise RequestError("multi-vector and expression queries are not emulated")
        query = coerce_value(schema, raw, "rank_by vector").astype(np.float64)
        if not candidates:
            return []
        matrix = np.stack([d[name] for d in candidates]).astype(np.float64)
        if self.namespace.distance_metric == "euclidean_squared":
            diff = matrix - query
            dists = np.einsum("ij,ij->i", diff, diff)
        else:
            norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
            dots = matrix @ query
            sims = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
            dists = 1.0 - sims
        order = sorted(range(len(candidates)), key=lambda i: (dists[i], _id_key(candidates[i]["id"])))
        return [(candidates[i], float(dists[i])) for i in order]

    def order_by(self, name: str, direction: str, candidates: list[Doc]) -> list[tuple[Doc, float]]:
        if name != "id":
            schema = self.namespace.schema.get(name)
            if schema is None:
                raise RequestError(f"rank_by: attribute {name!r} is not in the schema")
            if schema.is_array or schema.is_vector:
                raise RequestError("ordering by array or vector attributes is not supported")

        def key(doc: Doc) -> tuple[int, Any, Any]:
            value = doc.get(name)
            return (0, None, _id_key(doc["id"])) if value is None else (1, value, _id_key(doc["id"]))

        present = sorted((d for d in candidates if d.get(name) is not None), key=key,
                         reverse=direction == "desc")
        missing = sorted((d for d in candidates if d.get(name) is None),
                         key=lambda d: _id_key(d["id"]))
        ordered = missing + present if direction == "asc" else present + missing
        return [(d, 0.0) for d in ordered]

    def score_expression(
        self, expr: Any, candidates: list[Doc]
    ) -> Callable[[list[Doc]], npt.NDArray[np.float64]]:
        if not isinstance(expr, (list, tuple)) or not expr:
            raise RequestError("invalid rank_by expression")
        head = expr[0]
        if head in ("Sum", "Max") and len(expr) == 2 and isinstance(expr[1], (list, tuple)):
            parts = [self.score_expression(e, candidates) for e in expr[1]]
            if not parts:
                raise RequestError(f"{head} needs at least one clause")
            if head == "Sum":
                return lambda docs: np.sum([p(docs) for p in parts], axis=0)
            return lambda docs: np.max([p(docs) for p in parts], axis=0)
        if head == "Product" and len(expr) == 3:
            weight, inner = (expr[1], expr[2]) if isinstance(expr[1], (int, float)) else (
                expr[2], expr[1])
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
                raise RequestError("Product takes a non-negative weight")
            part = self.score_expression(inner, candidates)
            return lambda docs: float(weight) * part(docs)
        if len(expr) in (3, 4) and expr[1] == "BM25":
            return self.bm25(expr)
        if head in _NOT_EMULATED_HEADS:
            raise RequestError(f"the {head} ranking operator is not emulated")
        predicate: Predicate = self.compiler.compile(expr, "rank_by")
        return lambda docs: np.array([1.0 if predicate(d, None) else 0.0 for d in docs])

    def bm25(self, expr: Any) -> Callable[[list[Doc]], npt.NDArray[np.float64]]:
        name, _, query = expr[0], expr[1], expr[2]
        params = expr[3] if len(expr) == 4 else {}
        schema = self.namespace.schema.get(name) if isinstance(name, str) else None
        if schema is None or schema.full_text_search is None:
            raise RequestError(f"rank_by: {name!r} is not configured for full-text search")
        if not isinstance(params, dict) or set(params) - {"last_as_prefix"}:
            raise RequestError("BM25 options: only last_as_prefix is emulated")
        if not (isinstance(query, str) or (
                isinstance(query, list) and all(isinstance(q, str) for q in query))):
            raise RequestError("BM25 takes a query string or an array of strings")
        options = schema.full_text_search
        tokens = text.query_tokens(query, options)
        # Corpus statistics come from the whole namespace, not only the filtered docs.
        corpus_ids = list(self.docs)
        corpus = [text.value_tokens(self.docs[i].get(name), options) for i in corpus_ids]
        all_scores = text.bm25_scores(corpus, tokens, options, bool(params.get("last_as_prefix")))
        by_id = dict(zip(corpus_ids, all_scores, strict=True))
        return lambda docs: np.array([by_id.get(d["id"], 0.0) for d in docs], dtype=np.float64)

    # -- attributes and aggregations ------------------------------------------------

    def selector(self, include: object, exclude: object) -> Callable[[Doc], list[str]]:
        names = [n for n in self.namespace.schema]
        if include is not None and exclude is not None:
            raise RequestError("include_attributes and exclude_attributes are exclusive")
        if exclude is not None:
            if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
                raise RequestError("exclude_attributes must be an array of names")
            dropped = set(exclude)
            return lambda doc: [n for n in names if n not in dropped and doc.get(n) is not None]
        if include is None or include is False:
            return lambda doc: []
        if include is True:
            return lambda doc: [n for n in names if doc.get(n) is not None]
        if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
            raise invalid_type(include, "a boolean or a sequence of attribute names",
                               "include_attributes")
        wanted = [i for i in include if i != "id"]
        unknown = [i for i in wanted if i not in self.namespace.schema]
        if unknown:
            raise RequestError(
                f"include_attributes: {', '.join(unknown)} not in the namespace schema"
            )
        # A named attribute that a row lacks is left out of that row, not sent as null.
        return lambda doc: [n for n in wanted if doc.get(n) is not None]

    def aggregate(self, spec: object, docs: list[Doc]) -> dict[str, Any]:
        if not isinstance(spec, dict) or not spec:
            raise RequestError("aggregate_by maps labels to aggregate functions")
        out: dict[str, Any] = {}
        for label, func in spec.items():
            if func in (["Count"], ("Count",)):
                out[label] = len(docs)
                continue
            if isinstance(func, (list, tuple)) and len(func) == 2 and isinstance(func[1], str):
                name = func[1]
                if name != "id" and name not in self.namespace.schema:
                    raise RequestError(f"aggregate_by {label}: unknown attribute {name!r}")
                if func[0] == "Count":
                    out[label] = sum(1 for d in docs if d.get(name) is not None)
                    continue
                if func[0] == "Sum":
                    schema = self.namespace.schema.get(name)
                    if schema is None or schema.type not in ("int", "uint", "float"):
                        raise RequestError("Sum needs a numeric scalar attribute")
                    values = [d[name] for d in docs if d.get(name) is not None]
                    out[label] = sum(values) if values else 0
                    continue
            raise RequestError(f"aggregate_by {label}: unsupported aggregate {func!r}")
        return out


def _limit_per(rows: list[tuple[Doc, float]], per: dict[str, Any]) -> list[tuple[Doc, float]]:
    seen: dict[tuple[Any, ...], int] = {}
    kept = []
    for doc, dist in rows:
        key = tuple(repr(doc.get(a)) for a in per["attributes"])
        if seen.get(key, 0) < per["limit"]:
            seen[key] = seen.get(key, 0) + 1
            kept.append((doc, dist))
    return kept


def _id_key(doc_id: Any) -> tuple[int, Any]:
    """Ids of one namespace share a type; strings order by UTF-8 bytes."""
    if isinstance(doc_id, str):
        return (1, doc_id.encode("utf-8"))
    return (0, doc_id)
