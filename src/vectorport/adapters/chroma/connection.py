"""Chroma clients from connection URLs.

- ``chroma:///path``: a ``PersistentClient`` keeping its data in ``path``.
- ``chroma+memory://``: an in-process ``EphemeralClient``. Chroma shares one ephemeral
  system per process between all such clients, so each store gets a database of its own
  (a fresh ``vp_<uuid>`` in the default tenant), dropped again on ``close``; two stores
  never see each other's indexes.
- ``chroma+http://host:port`` (``chroma+https://`` for TLS): chromadb's HTTP client
  against a ``chroma run`` server or a deployment, with a timeout on every request (the
  store's ``?timeout=``) and the URL's credentials: ``user:password@`` for basic auth,
  ``?token_env=NAME`` for token auth (see :mod:`.http_client`).

``?tenant=`` and ``?database=`` (persistent and HTTP) pick an existing tenant and
database. Telemetry is switched off, and no embedding function is ever configured, so
nothing but the named server is contacted.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chromadb
from chromadb.api import ClientAPI
from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT, Settings

from vectorport.adapterkit import BackendError, ConfigError, ConnectionURL, deadline
from vectorport.adapters.chroma.dropping import drop_all_collections
from vectorport.adapters.chroma.errors import chroma_errors, is_not_found
from vectorport.adapters.chroma.http_client import (
    base_url,
    bound,
    preflight,
    with_credentials,
)
from vectorport.adapters.chroma.locking import WriteLock
from vectorport.adapters.chroma.options import MEMORY_URL_OPTIONS, URL_OPTIONS
from vectorport.adapters.chroma.recovery import recover

log = logging.getLogger("vectorport.chroma")

SCHEMES = ("chroma", "chroma+memory", "chroma+http", "chroma+https")


@dataclass
class Connection:
    """A Chroma client and what ``close`` must undo."""

    client: ClientAPI
    where: str
    """A printable, credential-free description (the redacted URL)."""
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    """Steps for ``close``, run last-added first."""
    exact_filter_numbers: bool = True
    """The engine takes ``where`` numbers exactly (false for a server: see
    :mod:`.floats`)."""

    def close(self) -> None:
        while self.cleanup:
            step = self.cleanup.pop()
            try:
                step()
            except Exception:  # closing must not fail half-way; the rest still runs
                continue


def _closer(client: ClientAPI) -> Callable[[], None]:
    """``client.close`` (chromadb's ``Client`` has it; the ``ClientAPI`` type does not)."""
    close: Callable[[], None] = getattr(client, "close", lambda: None)
    return close


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False)


def connect(url: ConnectionURL) -> Connection:
    if url.scheme not in SCHEMES:
        raise ConfigError(f"the chroma adapter does not handle {url.scheme}:// URLs")
    if url.scheme == "chroma+memory":
        MEMORY_URL_OPTIONS.url(url)
        if url.host or url.path not in ("", "/"):
            raise ConfigError("chroma+memory:// takes no host or path; use chroma:///path "
                              "to keep data on disk")
        return _memory(url)
    options = URL_OPTIONS.url(url)
    tenant = options.get("tenant") or DEFAULT_TENANT
    database = options.get("database") or DEFAULT_DATABASE
    if url.scheme == "chroma":
        if url.username is not None or url.credential("token") is not None:
            raise ConfigError("chroma:///path opens a local folder: it takes no credentials")
        if url.host:
            raise ConfigError(
                f"chroma URLs take a path, not a host: use chroma:///{url.host}{url.path} "
                "(three slashes) for an absolute path, or chroma+http://host:port for a server"
            )
        if url.path in ("", "/"):
            raise ConfigError("chroma:///path needs the folder that holds (or will hold) the data")
        connection = _open(url, lambda: chromadb.PersistentClient(
            path=Path(url.path), settings=_settings(), tenant=tenant, database=database))
        _recover(Path(url.path).resolve(), connection, options["keep_log"])
        return connection
    if not url.host:
        raise ConfigError(f"{url.scheme}:// needs a host, as in {url.scheme}://localhost:8000")
    if url.option("keep_log") is not None:
        raise ConfigError("keep_log is an option of chroma:///path folders; a Chroma "
                          "server keeps or purges its log by its own settings")
    ssl = url.scheme == "chroma+https"
    port = url.port or (443 if ssl else 8000)
    settings = with_credentials(_settings(), url)
    host, timeout = url.host, url.timeout()

    def make() -> ClientAPI:
        with deadline(timeout):  # the constructor's own requests have no timeout
            preflight(base_url(host, port, ssl), timeout, url.redacted())
            client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings,
                                         tenant=tenant, database=database)
        if not bound(client, timeout):
            log.warning("chroma: cannot set a timeout on this chromadb version's HTTP "
                        "client; a stalled server may hold calls indefinitely")
        return client

    connection = _open(url, make)
    connection.exact_filter_numbers = False
    return connection


def _open(url: ConnectionURL, make: Callable[[], ClientAPI]) -> Connection:
    where = url.redacted()
    with chroma_errors(f"connect to {where}"):
        try:
            client = make()
        except Exception as exc:
            if is_not_found(exc):  # an unknown tenant or database
                raise ConfigError(f"chroma at {where}: {exc}") from exc
            if isinstance(exc, ValueError) and "different settings" in str(exc):
                raise ConfigError(
                    f"chroma at {where}: this process already opened it with other "
                    "chromadb Settings; vectorport needs anonymized_telemetry=False"
                ) from exc
            raise
    connection = Connection(client, where)
    connection.cleanup.append(_closer(client))
    return connection


def _recover(folder: Path, connection: Connection, keep_log: bool) -> None:
    """Keep Chroma's log and have it rebuild vector indexes torn by a killed writer
    (see :mod:`.recovery`), holding the lock every vectorport writer of the folder
    holds while Chroma may persist."""
    try:
        with WriteLock.of_folder(folder).held():
            recover(folder, keep_log)
    except Exception as exc:
        connection.close()
        raise BackendError(f"chroma at {connection.where}: could not check the folder "
                           f"for vector indexes torn by a crash: {exc}") from exc


def _memory(url: ConnectionURL) -> Connection:
    database = f"vp_{uuid.uuid4().hex}"
    admin: Any
    with chroma_errors("open an in-memory chroma"):
        admin = chromadb.AdminClient(_settings_ephemeral())
        admin.create_database(database)
        client = chromadb.EphemeralClient(settings=_settings_ephemeral(), database=database)
    connection = Connection(client, url.redacted())
    # Run last-added first: drop the collections record by record (see .dropping),
    # close the client, then drop the now empty database.
    connection.cleanup.append(lambda: admin.delete_database(database))
    connection.cleanup.append(_closer(client))
    connection.cleanup.append(lambda: drop_all_collections(client))
    return connection


def _settings_ephemeral() -> Settings:
    settings = _settings()
    settings.is_persistent = False
    return settings


__all__ = ["SCHEMES", "Connection", "connect"]
