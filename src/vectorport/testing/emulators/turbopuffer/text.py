"""Text features: a word tokenizer, BM25 scoring and globset-style patterns.

The tokenizer is a plain approximation of turbopuffer's default ``word_v3``: Unicode
word characters, lower-cased unless the attribute is case sensitive. BM25 uses the
documented parameters (``k1`` 1.2, ``b`` 0.75, ``k3`` 8.0 unless the schema says
otherwise), so scores have the right shape but are not byte-for-byte the service's.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str, options: dict[str, Any] | None = None) -> list[str]:
    opts = options or {}
    tokens = _WORD.findall(text)
    if not opts.get("case_sensitive", False):
        tokens = [t.lower() for t in tokens]
    max_len = int(opts.get("max_token_length", 39))
    return [t for t in tokens if len(t.encode("utf-8")) <= max_len]


def value_tokens(value: object, options: dict[str, Any] | None) -> list[str]:
    """Tokens of a ``string`` or ``[]string`` attribute value."""
    if isinstance(value, str):
        return tokenize(value, options)
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if isinstance(item, str):
                out.extend(tokenize(item, options))
        return out
    return []


def query_tokens(query: str | Sequence[str], options: dict[str, Any] | None) -> list[str]:
    if isinstance(query, str):
        return tokenize(query, options)
    return [t for q in query for t in tokenize(q, options)]


def bm25_scores(
    docs: Sequence[list[str]], query: list[str], options: dict[str, Any] | None,
    last_as_prefix: bool = False,
) -> list[float]:
    """BM25 of one query against every document's token list (0 for no match)."""
    opts = options or {}
    k1 = float(opts.get("k1", 1.2))
    b = float(opts.get("b", 0.75))
    k3 = float(opts.get("k3", 8.0))
    n_docs = len(docs)
    if not n_docs or not query:
        return [0.0] * n_docs
    avg_len = sum(len(d) for d in docs) / n_docs or 1.0
    counts = [Counter(d) for d in docs]
    query_counts = Counter(query)
    prefix = query[-1] if last_as_prefix else None
    scores = [0.0] * n_docs
    for term, qtf in query_counts.items():
        is_prefix = term == prefix
        matches = [
            sum(c for t, c in tf.items() if t.startswith(term)) if is_prefix else tf.get(term, 0)
            for tf in counts
        ]
        df = sum(1 for m in matches if m)
        if not df:
            continue
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        query_weight = (k3 + 1.0) * qtf / (k3 + qtf)
        for i, tf_value in enumerate(matches):
            if not tf_value:
                continue
            if is_prefix:
                scores[i] += 1.0
                continue
            norm = k1 * (1.0 - b + b * len(docs[i]) / avg_len)
            scores[i] += idf * (tf_value * (k1 + 1.0)) / (tf_value + norm) * query_weight
    return scores


def contains_tokens(
    doc_tokens: list[str], wanted: list[str], mode: str, last_as_prefix: bool
) -> bool:
    """``ContainsAllTokens`` / ``ContainsAnyToken`` / ``ContainsTokenSequence``."""
    if not wanted:
        return False

    def has(term: str, prefix: bool) -> bool:
        return any(t.startswith(term) for t in doc_tokens) if prefix else term in doc_tokens

    last = len(wanted) - 1
    if mode == "all":
        return all(has(t, last_as_prefix and i == last) for i, t in enumerate(wanted))
    if mode == "any":
        return any(has(t, last_as_prefix and i == last) for i, t in enumerate(wanted))
    width = len(wanted)
    return any(doc_tokens[i:i + width] == wanted for i in range(len(doc_tokens) - width + 1))


@lru_cache(maxsize=256)
def glob_regex(pattern: str, case_insensitive: bool) -> re.Pattern[str]:
    """A regex for a globset pattern: ``*`` ``**`` ``?`` ``[...]`` ``[!...]`` ``{a,b}``
    and ``\\`` escapes; ``*`` also matches ``/`` (globset's default)."""
    out: list[str] = []
    i, depth = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            while i + 1 < len(pattern) and pattern[i + 1] == "*":
                i += 1
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = pattern.find("]", i + 2 if i + 1 < len(pattern) and pattern[i + 1] in "!^" else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1:end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("]", "\\]")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    flags = re.DOTALL | (re.IGNORECASE if case_insensitive else 0)
    return re.compile("".join(out) + r"\Z", flags)


def glob_matches(pattern: str, value: object, case_insensitive: bool) -> bool:
    regex = glob_regex(pattern, case_insensitive)
    items: Iterable[object] = value if isinstance(value, list) else (value,)
    return any(isinstance(v, str) and regex.match(v) is not None for v in items)
