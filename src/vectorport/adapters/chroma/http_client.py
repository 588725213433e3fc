"""chromadb's HTTP client with a timeout, and with the URL's credentials.

chromadb's ``HttpClient`` builds its ``httpx.Client`` with ``timeout=None`` and asks the
server for the tenant and database while it is being constructed: against a server that
accepts connections and never answers, the constructor and every later call would wait
forever. So vectorport first asks for the heartbeat itself, with the store's timeout
(:func:`preflight`: a stalled or absent server fails here, in time), then constructs
the client, then gives its session the timeout and a request hook that cuts each
request's timeout to what is left of the call's deadline
(:func:`vectorport.core.retry.request_timeout`). chromadb gives each HTTP client a
system of its own, so every store keeps its own timeout.

Credentials: ``chroma+http://user:password@host`` uses Chroma's basic auth, and
``?token=`` / ``?token_env=NAME`` its token auth (``Authorization: Bearer``); both at
once are refused. They travel only in chromadb's auth provider (a ``SecretStr``), never
in a message.
"""

from __future__ import annotations

from typing import Any

import httpx
from chromadb.api import ClientAPI
from chromadb.config import Settings

from vectorport.adapterkit import ConfigError, ConnectionURL
from vectorport.adapterkit.http_deadline import deadline_hook
from vectorport.core.errors import TransientBackendError
from vectorport.core.retry import request_timeout

_BASIC = "chromadb.auth.basic_authn.BasicAuthClientProvider"
_TOKEN = "chromadb.auth.token_authn.TokenAuthClientProvider"
HEARTBEAT = "/api/v2/heartbeat"


def with_credentials(settings: Settings, url: ConnectionURL) -> Settings:
    """``settings`` with the URL's basic or token auth (refusing what cannot be used)."""
    token = url.credential("token")
    if url.username is not None or url.password is not None:
        if token is not None:
            raise ConfigError("give either user:password in the chroma URL or a token, not both")
        if not url.username or url.password is None or ":" in url.username:
            raise ConfigError("chroma basic auth needs user:password in the URL (a user name "
                              "without ':'), or use ?token_env=NAME for token auth")
        settings.chroma_client_auth_provider = _BASIC
        settings.chroma_client_auth_credentials = f"{url.username}:{url.password.reveal()}"
    elif token is not None:
        settings.chroma_client_auth_provider = _TOKEN
        settings.chroma_client_auth_credentials = token.reveal()
    return settings


def base_url(host: str, port: int, ssl: bool) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if ssl else 'http'}://{shown}:{port}"


def preflight(base: str, timeout: float, where: str) -> None:
    """Ask for the heartbeat within ``timeout``; a server that does not answer (or is
    not there) is a :class:`TransientBackendError` (the heartbeat needs no auth)."""
    try:
        httpx.get(base + HEARTBEAT, timeout=request_timeout(timeout))
    except httpx.TimeoutException:
        raise TransientBackendError(
            f"chroma at {where} did not answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise TransientBackendError(
            f"chroma at {where} cannot be reached ({type(exc).__name__})") from None


def bound(client: ClientAPI, timeout: float) -> bool:
    """Give the client's HTTP session ``timeout`` and the per-request deadline hook;
    ``False`` when this chromadb version is laid out differently."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client):
        return False
    session.timeout = httpx.Timeout(timeout)
    hooks: dict[str, list[Any]] = dict(session.event_hooks)
    hooks["request"] = [*hooks.get("request", []), deadline_hook(timeout)]
    session.event_hooks = hooks
    return True


__all__ = ["base_url", "bound", "preflight", "with_credentials"]
