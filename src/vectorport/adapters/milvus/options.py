"""The milvus URL options and the ``milvus`` sections of ``backend_options``.

URL: ``token`` / ``token_env`` (or ``user:password@`` in the URL) for authentication,
``db_name`` (a server database) and ``timeout`` (seconds per call). Index options:
``num_partitions`` (1..1024, how many partitions the partition key hashes namespaces
into; not on milvus-lite 2, which has no partition key). Queries take no options.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import IndexSpec, Option, OptionSpec, UnsupportedFeatureError
from vectorport.adapters.milvus.engine_line import CURRENT, Engine

BACKEND = "milvus"


def _partitions(value: Any) -> str | None:
    return None if 1 <= value <= 1024 else "must be in 1..1024"


URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("token", "credential"),
    Option("db_name"),
    Option("timeout", "seconds"),
))

INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("num_partitions", "int", check=_partitions),
))

QUERY_OPTIONS = OptionSpec(BACKEND, "query")


def creation_options(spec: IndexSpec, engine: Engine = CURRENT) -> dict[str, Any]:
    """The ``milvus`` index options, checked, as ``create_collection`` keywords."""
    options = INDEX_OPTIONS.index(spec)
    if "num_partitions" in options and not engine.partition_key:
        raise UnsupportedFeatureError(
            BACKEND, f"num_partitions (no partition key on {engine.name})"
        )
    return options


__all__ = ["INDEX_OPTIONS", "QUERY_OPTIONS", "URL_OPTIONS", "creation_options"]
