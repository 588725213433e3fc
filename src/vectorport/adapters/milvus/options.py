"""The milvus URL options and the ``milvus`` sections of ``backend_options``.

URL: ``token`` / ``token_env`` (or ``user:password@`` in the URL) for authentication,
``db_name`` (a server database) and ``timeout`` (seconds per call). Index options:

``num_partitions`` (1..1024) how many partitions the partition key hashes namespaces
                   into; not on milvus-lite 2, which has no partition key.
``optimize_every`` rows written (through one connection) before the next read seals
                   them (milvus-lite only, default 1,000; ``0``: only when
                   ``store.adapter.optimize`` is called, or a scan longer than a page):
                   milvus-lite searches and counts the rows of its growing segment one
                   by one. A server seals on its own, and refuses the option.

Queries take no options.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import IndexSpec, Option, OptionSpec, UnsupportedFeatureError, within
from vectorport.adapters.milvus.engine_line import CURRENT, Engine

BACKEND = "milvus"
DEFAULT_OPTIMIZE_EVERY = 1_000
"""Rows written before a read seals them. Up to this many unsealed rows cost a
milvus-lite search about 30 µs each (1,000 × 384: 30 against 17 ms sealed), and
sealing them about 80 ms."""


def _partitions(value: Any) -> str | None:
    return None if 1 <= value <= 1024 else "must be in 1..1024"


URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("token", "credential"),
    Option("db_name"),
    Option("timeout", "seconds"),
))

INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("num_partitions", "int", check=_partitions),
    Option("optimize_every", "int", default=DEFAULT_OPTIMIZE_EVERY, check=within(0, 2**31)),
))

QUERY_OPTIONS = OptionSpec(BACKEND, "query")


def creation_options(spec: IndexSpec, engine: Engine = CURRENT) -> dict[str, Any]:
    """The ``milvus`` index options, checked, as ``create_collection`` keywords."""
    options = INDEX_OPTIONS.index(spec)
    del options["optimize_every"]  # the adapter's own (:func:`optimize_every`)
    if "num_partitions" in options and not engine.partition_key:
        raise UnsupportedFeatureError(
            BACKEND, f"num_partitions (no partition key on {engine.name})"
        )
    if engine.seals_on_its_own and "optimize_every" in (spec.backend_options.get(BACKEND)
                                                         or {}):
        raise UnsupportedFeatureError(
            BACKEND, f"optimize_every (a {engine.name} seals its segments on its own)")
    return options


def optimize_every(spec: IndexSpec) -> int:
    """Rows written before a read seals them (``optimize_every``, checked)."""
    every: int = INDEX_OPTIONS.index(spec)["optimize_every"]
    return every


__all__ = ["DEFAULT_OPTIMIZE_EVERY", "INDEX_OPTIONS", "QUERY_OPTIONS", "URL_OPTIONS",
           "creation_options", "optimize_every"]
