"""The SDK clients, set up so that vectorport's retry policy is the only one.

The SDK retries 408/429/5xx and transport errors itself (four tries, up to a minute of
backoff, per request), out of reach of the call's deadline: nested inside the facade's
retries, a stalled server took minutes to give up on. So the control-plane client gets
``RetryConfig(max_retries=0)``, and each data-plane client (whose constructor takes no
retry config) has its retry transport set to the same: every retry is then the
adapter's per-request :data:`~vectorport.adapters.pinecone.errors.REQUEST_RETRY` or the
facade's, both inside the one deadline (see :mod:`vectorport.core.retry`). Every
request's socket timeout is the store's ``?timeout=``, cut to what is left of the call's
deadline by :class:`DeadlineTransport`, which wraps the SDK's transport (its POST fast
path calls the transport directly, past httpx's event hooks).
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from pinecone import Pinecone, RetryConfig
from pinecone.errors.exceptions import PineconeError
from pinecone.index import Index as PineconeIndex

from vectorport.adapterkit import ConfigError, request_timeout

log = logging.getLogger("vectorport.pinecone")

NO_SDK_RETRIES = RetryConfig(max_retries=0)


class DeadlineTransport(httpx.BaseTransport):
    """Sends through ``inner`` with each of the request's timeouts cut to what is left
    of the current call's deadline."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        given = request.extensions.get("timeout")
        if isinstance(given, dict):
            request.extensions = {**request.extensions, "timeout": {
                phase: None if value is None else request_timeout(value)
                for phase, value in given.items()}}
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def make_client(api_key: str, host: str | None, timeout: float) -> Pinecone:
    """The control-plane client; configuration errors never show the key."""
    try:
        client = Pinecone(api_key=api_key, host=host, source_tag="vectorport",
                          timeout=timeout, retry_config=NO_SDK_RETRIES)
    except PineconeError as exc:
        raise ConfigError(f"cannot configure the Pinecone client: {exc}") from None
    _cut_to_deadline(client)
    return client


def open_index(client: Pinecone, host: str) -> PineconeIndex:
    """The data-plane client for an index host, without SDK retries."""
    index = client.index(host=host)
    disable_sdk_retries(index)
    _cut_to_deadline(index)
    return index


def _cut_to_deadline(sdk_object: Any) -> None:
    http = getattr(getattr(sdk_object, "_http", None), "_client", None)
    transport = getattr(http, "_transport", None)
    if isinstance(transport, httpx.BaseTransport) and not isinstance(
            transport, DeadlineTransport):
        http._transport = DeadlineTransport(transport)  # type: ignore[union-attr]
    else:
        log.warning("pinecone: cannot bound this SDK version's requests by the deadline")


def disable_sdk_retries(sdk_object: Any) -> bool:
    """Set the SDK's retry transport under ``sdk_object`` to no retries; ``False`` (and
    a warning) when this SDK version is laid out differently."""
    transport: Any = getattr(getattr(getattr(sdk_object, "_http", None), "_client", None),
                             "_transport", None)
    if isinstance(transport, DeadlineTransport):
        transport = transport.inner
    if transport is None or not isinstance(getattr(transport, "_config", None), RetryConfig):
        log.warning("pinecone: cannot switch off the SDK's own retries in this SDK version; "
                    "calls may take longer than their deadline")
        return False
    transport._config = NO_SDK_RETRIES
    return True


__all__ = ["NO_SDK_RETRIES", "DeadlineTransport", "disable_sdk_retries", "make_client", "open_index"]
