"""The turbopuffer URL options and the ``turbopuffer`` sections of ``backend_options``.

URL: ``region`` or ``base_url`` (one of them), ``api_key`` / ``api_key_env`` (default
``TURBOPUFFER_API_KEY``), ``prefix`` of every namespace the adapter makes (default
``vectorport.``), ``timeout`` (seconds one call may take, retries included; default
30) and ``max_retries`` (the SDK's own retries, default 0: the adapter retries transient
failures itself, within the call's deadline).

Index options: none. Query options: ``exact`` (``true`` asks for exhaustive ``kNN``
instead of ``ANN``).
"""

from __future__ import annotations

from vectorport.adapterkit import Option, OptionSpec, matching
from vectorport.adapters.turbopuffer.naming import DEFAULT_PREFIX, PREFIX_RE

BACKEND = "turbopuffer"


URL_OPTIONS = OptionSpec(BACKEND, "URL", (
    Option("api_key", "credential"),
    Option("region"),
    Option("base_url"),
    Option("prefix", default=DEFAULT_PREFIX,
           check=matching(PREFIX_RE, "takes up to 18 characters of A-Z a-z 0-9 _ . -")),
    Option("timeout", "seconds"),  # the store's deadline (CONTRACT §6), 30 s unless set
    Option("max_retries", "int", default=0),
))

INDEX_OPTIONS = OptionSpec(BACKEND, "index")

QUERY_OPTIONS = OptionSpec(BACKEND, "query", (Option("exact", "bool", default=False),))

__all__ = ["BACKEND", "INDEX_OPTIONS", "QUERY_OPTIONS", "URL_OPTIONS"]
