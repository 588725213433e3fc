"""The SDK clients, set up so that vectorport's retry policy is the only one.

The SDK retries 408/429/5xx and transport errors itself (four tries, up to a minute of
backoff, per request), out of reach of the call's deadline: nested inside the facade's
retries, a stalled server took minutes to give up on. So the control-plane client gets
``RetryConfig(max_retries=0)``, and each data-plane client (whose constructor takes no
retry config) has its retry transport set to the same: every retry is then the
adapter's per-request :data:`~vectorport.adapters.pinecone.errors.REQUEST_RETRY` or the
facade's, both inside the one deadline (see :mod:`vectorport.core.retry`). Every
request's socket timeout is the store's ``?timeout=``.
"""

from __future__ import annotations

import logging
from typing import Any

from pinecone import Pinecone, RetryConfig
from pinecone.errors.exceptions import PineconeError
from pinecone.index import Index as PineconeIndex

from vectorport.adapterkit import ConfigError

log = logging.getLogger("vectorport.pinecone")

NO_SDK_RETRIES = RetryConfig(max_retries=0)


def make_client(api_key: str, host: str | None, timeout: float) -> Pinecone:
    """The control-plane client; configuration errors never show the key."""
    try:
        return Pinecone(api_key=api_key, host=host, source_tag="vectorport", timeout=timeout,
                        retry_config=NO_SDK_RETRIES)
    except PineconeError as exc:
        raise ConfigError(f"cannot configure the Pinecone client: {exc}") from None


def open_index(client: Pinecone, host: str) -> PineconeIndex:
    """The data-plane client for an index host, without SDK retries."""
    index = client.index(host=host)
    disable_sdk_retries(index)
    return index


def disable_sdk_retries(sdk_object: Any) -> bool:
    """Set the SDK's retry transport under ``sdk_object`` to no retries; ``False`` (and
    a warning) when this SDK version is laid out differently."""
    transport = getattr(getattr(getattr(sdk_object, "_http", None), "_client", None),
                        "_transport", None)
    if transport is None or not isinstance(getattr(transport, "_config", None), RetryConfig):
        log.warning("pinecone: cannot switch off the SDK's own retries in this SDK version; "
                    "calls may take longer than their deadline")
        return False
    transport._config = NO_SDK_RETRIES
    return True


__all__ = ["NO_SDK_RETRIES", "disable_sdk_retries", "make_client", "open_index"]
