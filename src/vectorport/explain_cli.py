"""``vectorport explain URL/INDEX``: print what a query would send, without sending it.

    vectorport explain 'pgvector://me@/app/docs?host=/run/pg' \\
        --filter '{"year": {"$gte": 2020}}' --top-k 5 --ef 77

The query vector is random (seeded, so the output is repeatable) unless ``--vector``
gives one; explain never shows it. The store URL prints masked (no password or key).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from vectorport.core.errors import ValidationError
from vectorport.core.store import connect
from vectorport.transfer.cli import split_index_url


def _json_arg(text: str | None, what: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{what} is not JSON: {exc.msg} at position {exc.pos}") from None


def cmd_explain(args: argparse.Namespace) -> int:
    store_url, name = split_index_url(args.url, args.index)
    with connect(store_url) as store:
        index = store.index(name)
        vector = _json_arg(args.vector, "--vector")
        if vector is None:
            vector = np.random.default_rng(args.seed).standard_normal(index.dimension)
        options: dict[str, Any] = {"top_k": args.top_k, "namespace": args.namespace,
                                   "filter": _json_arg(args.filter, "--filter"),
                                   "consistency": args.consistency}
        for key in ("ef", "probes", "min_score"):
            if getattr(args, key) is not None:
                options[key] = getattr(args, key)
        backend_options = _json_arg(args.backend_options, "--backend-options")
        if backend_options is not None:
            options["backend_options"] = backend_options
        explanation = index.explain(vector, **options)
    if args.json:
        json.dump(explanation.to_dict(), sys.stdout, indent=2)
        print()
    else:
        print(explanation)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help="print what a query would send to the backend "
                       "(SQL, filter JSON, expression, settings) without sending it",
                       description=__doc__)
    p.add_argument("url", metavar="URL", help="store URL ending in /INDEX (or use --index)")
    p.add_argument("--index", default=None, help="the index's name (URL is then the store's URL as it is)")
    p.add_argument("--filter", default=None, help="a filter object (CONTRACT §2), as JSON")
    p.add_argument("--top-k", type=int, default=10, help="results asked for")
    p.add_argument("--namespace", default="", help="the namespace queried ('' is the default)")
    p.add_argument("--ef", type=int, default=None, help="the HNSW search depth hint")
    p.add_argument("--probes", type=int, default=None, help="the IVF lists-searched hint")
    p.add_argument("--min-score", type=float, default=None,
                   help="keep only results scoring at least this")
    p.add_argument("--consistency", choices=["strong", "eventual"], default="strong",
                   help="read your own writes, or answer from what the backend has")
    p.add_argument("--backend-options", default=None,
                   help='per-backend query options as JSON, e.g. \'{"pgvector": {...}}\'')
    group = p.add_mutually_exclusive_group()
    group.add_argument("--vector", default=None, help="the query vector as a JSON list")
    group.add_argument("--random", action="store_true",
                       help="a random query vector (the default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random vector")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(func=cmd_explain)
