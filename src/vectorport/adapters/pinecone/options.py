"""The pinecone URL options and the ``pinecone`` sections of ``backend_options``.

URL: ``api_key`` / ``api_key_env`` (default ``PINECONE_API_KEY``), ``host`` (a local
emulator or private control-plane endpoint), ``cloud`` / ``region`` of new indexes
(default ``aws`` / ``us-east-1``), ``consistency_timeout`` (seconds a strong read may
wait, default 30) and ``ready_timeout`` (seconds to wait for a new index, default 300).

Index options: ``cloud``, ``region``, ``deletion_protection`` (``"enabled"`` or
``"disabled"``) and ``tags`` (str → str; the tags ``vectorport_create`` and
``vectorport_layout`` are reserved for the creation token and the records' layout).
Queries take no options.
"""

from __future__ import annotations

from typing import Any

from vectorport.adapterkit import Option, OptionSpec
from vectorport.adapters.pinecone.codec import BACKEND, LAYOUT_TAG

CREATE_TOKEN_TAG = "vectorport_create"
RESERVED_TAGS = (CREATE_TOKEN_TAG, LAYOUT_TAG)


def _no_reserved_tag(tags: Any) -> str | None:
    for tag in RESERVED_TAGS:
        if tag in tags:
            return f"may not use the tag {tag!r}: vectorport reserves it"
    return None


URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("api_key", "credential"),
    Option("host"),
    Option("cloud", default="aws"),
    Option("region", default="us-east-1"),
    Option("consistency_timeout", "seconds", default=30.0),
    Option("ready_timeout", "seconds", default=300.0),
))

INDEX_OPTIONS = OptionSpec(BACKEND, "index", (
    Option("cloud"),
    Option("region"),
    Option("deletion_protection", default="disabled", choices=("enabled", "disabled")),
    Option("tags", "str_map", default={}, check=_no_reserved_tag),
))

QUERY_OPTIONS = OptionSpec(BACKEND, "query")

__all__ = ["CREATE_TOKEN_TAG", "INDEX_OPTIONS", "QUERY_OPTIONS", "URL_OPTIONS"]
