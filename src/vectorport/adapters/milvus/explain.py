"""``explain`` for Milvus, and the pure pieces of the search request it shares with the
query path (:func:`dense_search_params`, used by :class:`.search.Candidates`).

The expression a query sends is the namespace condition and the compiled filter, as
:meth:`MilvusAdapter._scoped` builds it for the query itself. Its literals are values
(the namespace, filter values), so :func:`mask_literals` shows the expression with each
literal replaced by a ``?`` marker and lists the markers' kinds; JSON keys
(``meta["n:year"]``, ``$meta["n:year"]``) are field names and stay, but for the value
part of a membership key (``$meta["e:tags:?"]``), which is a filter value.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import Explanation, IndexSpec, QueryRequest
from vectorport.adapters.milvus import layout
from vectorport.adapters.milvus.collection import MILVUS_METRICS
from vectorport.adapters.milvus.filters import namespace_expression
from vectorport.adapters.milvus.ranking import first_search_depth

BACKEND = "milvus"
CONSISTENCY = {"strong": "Strong", "eventual": "Eventually"}


def dense_search_params(index: IndexSpec, request: QueryRequest, depth: int) -> dict[str, Any]:
    """The ``search_params`` of a dense search ``depth`` deep."""
    params: dict[str, Any] = {}
    if index.index_type == "hnsw":
        # Milvus wants ef >= limit; the caller's ef widens the search further.
        params["ef"] = max(depth, request.ef or 0)
    elif index.index_type == "ivf" and request.probes is not None:
        params["nprobe"] = min(request.probes, index.index_params.get("lists", 128))
    return {"metric_type": MILVUS_METRICS[index.metric], "params": params}


_MEMBER_KEY = '"' + layout.MEMBER + ":"
"""How a membership key of the filter-keys layout opens (``$meta["e:field:value"]``):
the field name is an identifier, so the key's value part starts after its second
``:``."""


def _string_end(text: str, start: int) -> int:
    """The index just past the double-quoted literal opening at ``start``."""
    i = start + 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def mask_literals(expression: str) -> tuple[str, tuple[str, ...]]:
    """``expression`` with its string, number and boolean literals replaced by ``?``,
    and their kinds in order. A string right after ``[`` is a JSON key: kept, but for
    the value of a membership key (``e:field:value``)."""
    out: list[str] = []
    kinds: list[str] = []
    i, n = 0, len(expression)
    while i < n:
        ch = expression[i]
        if ch == '"':
            end = _string_end(expression, i)
            if i >= 2 and expression[i - 1] == "[" and (
                    expression[i - 2].isalnum() or expression[i - 2] == "_"):
                if expression.startswith(_MEMBER_KEY, i):  # "e:field:value": a value
                    field_end = expression.index(":", i + len(_MEMBER_KEY)) + 1
                    out.append(expression[i:field_end] + '?"')
                    kinds.append("string")
                else:
                    out.append(expression[i:end])
            else:
                out.append("?")
                kinds.append("string")
            i = end
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (expression[j].isalnum() or expression[j] == "_"):
                j += 1
            word = expression[i:j]
            if word in ("true", "false"):
                out.append("?")
                kinds.append("bool")
            else:
                out.append(word)
            i = j
        elif ch.isdigit() or (ch == "-" and i + 1 < n and expression[i + 1].isdigit()
                              and (not out or out[-1].rstrip()[-1:] in "([,=<>")):
            j = i + 1
            while j < n and (expression[j].isalnum() or expression[j] in ".+-"):
                if expression[j] in "+-" and expression[j - 1] not in "eE":
                    break
                j += 1
            token = expression[i:j]
            out.append("?")
            kinds.append("float" if any(c in token for c in ".eE") else "int")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out), tuple(kinds)


def _filter_part(masked: str, namespace: str) -> str:
    """The masked filter alone: the masked expression after its namespace condition."""
    prefix = mask_literals(namespace_expression(namespace))[0] + " and "
    return masked[len(prefix):] if masked.startswith(prefix) else masked


def explain_query(index: IndexSpec, request: QueryRequest, expression: str,
                  output_fields: list[str], cap: int) -> Explanation:
    masked, kinds = mask_literals(expression)
    depth = first_search_depth(request.top_k, cap, dense_only=request.sparse is None)
    notes = ["literals of the expression (namespace, filter values) are shown as ? "
             "with their kinds"]
    search: list[str] = []
    settings: dict[str, Any] = {"first_depth": depth, "depth_cap": cap,
                                "consistency_level": CONSISTENCY[request.consistency]}
    if request.vector is not None:
        params = dense_search_params(index, request, depth)
        settings["metric_type"] = params["metric_type"]
        settings.update(params["params"])
        for hint, value, used in (("ef", request.ef, "ef"), ("probes", request.probes, "nprobe")):
            if value is not None and used not in params["params"]:
                notes.append(f"{hint} does not apply to this index (index_type "
                             f"{index.index_type!r}): not sent")
        search.append(f"search(anns_field=vector, limit={depth}, search_params={params})")
    if request.sparse is not None:
        search.append(f"sparse searches (IP, drop_ratio_search=0.0), limit={depth}")
    notes.append(f"first search {depth} deep, deeper while the cut is tied (up to {cap}); "
                 "scores are recomputed exactly from the returned vectors")
    return Explanation(
        backend=BACKEND, index=index.name, namespace=request.namespace,
        top_k=request.top_k, language="milvus-expression", request=masked,
        parameters=kinds,
        filter=_filter_part(masked, request.namespace) if request.filter is not None else None,
        settings=settings,
        statements=(*search, f"output_fields={output_fields}"),
        notes=tuple(notes),
    )
