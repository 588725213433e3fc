"""Connection URLs, credentials and config files.

One URL names a backend and where it lives: ``pgvector://user@host:5432/db?schema=app``,
``pinecone://?api_key_env=PINECONE_API_KEY``, ``local:///path``. The same string works
in code, in ``VECTORPORT_URL``, in a TOML file and on the command line.

Credentials are held in :class:`Secret`, whose ``repr`` and ``str`` are masked, and a URL
is only ever shown through :meth:`ConnectionURL.redacted`. Passing a key in the URL
itself is possible but discouraged: ``api_key_env=NAME`` reads it from the environment.
Any query option whose name says it holds a credential (``password``, ``sslpassword``,
``api-key``, ``x_token``…) is kept as a :class:`Secret` whether or not the backend knows
it, and errors about options name them without ever echoing a value. A URL whose
user-info was not percent-encoded (a password holding ``/``, ``?`` or ``#`` ends the
host part early) is refused without being shown.

``?timeout=SECONDS`` is read by every backend: how long one call may take, retries
included (CONTRACT §6).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from vectorport.core.errors import ConfigError

URL_ENV = "VECTORPORT_URL"
DEFAULT_URL = "local://"
"""The embedded default: the ``local`` adapter, kept under the user's data folder."""


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential. Its text is reachable only through :meth:`reveal`."""

    _value: str = field(repr=False)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    def __str__(self) -> str:
        return "********"

    def __bool__(self) -> bool:
        return bool(self._value)


_SECRET_QUERY_KEYS = frozenset({"api_key", "apikey", "password", "token", "key", "secret"})
_SECRET_WORDS = ("password", "passwd", "pwd", "secret", "token", "key", "credential", "auth")

COMMON_URL_OPTIONS = frozenset({"timeout"})
"""Options every backend accepts (the facade reads them)."""


def is_secret_option(name: str) -> bool:
    """Whether a query option's name says its value is a credential (``*_env`` options
    name an environment variable, which is not)."""
    lowered = name.lower()
    if lowered in _SECRET_QUERY_KEYS:
        return True
    if lowered.endswith("_env"):
        return False
    return any(lowered.endswith(word) for word in _SECRET_WORDS)


@dataclass(frozen=True, slots=True)
class ConnectionURL:
    """A parsed connection URL. ``password`` and secret query values are masked."""

    scheme: str
    host: str | None = None
    port: int | None = None
    username: str | None = None
    password: Secret | None = None
    path: str = ""
    query: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, Secret] = field(default_factory=dict)

    def redacted(self) -> str:
        """The URL with every credential replaced by ``***``, safe to print or log."""
        netloc = ""
        if self.username is not None:
            netloc = self.username + (":***" if self.password else "") + "@"
        if self.host is not None:
            netloc += f"[{self.host}]" if ":" in self.host else self.host
        if self.port is not None:
            netloc += f":{self.port}"
        shown = {**self.query, **{k: "***" for k in self.secrets}}
        query = "&".join(f"{k}={v}" for k, v in shown.items())
        return f"{self.scheme}://{netloc}{self.path}" + (f"?{query}" if query else "")

    def __repr__(self) -> str:
        return f"ConnectionURL({self.redacted()!r})"

    __str__ = redacted

    def option(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, default)

    def int_option(self, name: str, default: int) -> int:
        raw = self.query.get(name)
        if raw is None:
            return default
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"URL option {name}={raw!r} must be an integer") from None

    def float_option(self, name: str, default: float) -> float:
        raw = self.query.get(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"URL option {name}={raw!r} must be a number") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise ConfigError(f"URL option {name}={raw!r} must be a finite number")
        return value

    def seconds_option(self, name: str, default: float) -> float:
        """A positive duration in seconds (timeouts, waits): ``?timeout=2.5``."""
        value = self.float_option(name, default)
        if not value > 0:
            raise ConfigError(
                f"URL option {name}={self.query.get(name)!r} must be a positive number of seconds"
            )
        return value

    def timeout(self) -> float:
        """``?timeout=`` seconds (default :data:`~vectorport.core.retry.DEFAULT_TIMEOUT`)."""
        from vectorport.core.retry import DEFAULT_TIMEOUT

        return self.seconds_option("timeout", DEFAULT_TIMEOUT)

    def credential(self, name: str, default_env: str | None = None) -> Secret | None:
        """A credential from ``?{name}=`` (discouraged), ``?{name}_env=VAR``, or
        ``default_env``. Missing ``{name}_env`` variables raise ``ConfigError``."""
        if name in self.secrets:
            return self.secrets[name]
        env_name = self.query.get(f"{name}_env")
        if env_name is not None:
            value = os.environ.get(env_name)
            if not value:
                raise ConfigError(
                    f"environment variable {env_name} (named by {name}_env) is not set"
                )
            return Secret(value)
        if default_env is not None and os.environ.get(default_env):
            return Secret(os.environ[default_env])
        return None

    def unknown_options(self, known: set[str] | frozenset[str]) -> None:
        """Raise ``ConfigError`` for query options the adapter does not read."""
        extra = (set(self.query) | set(self.secrets)) - set(known) - COMMON_URL_OPTIONS
        if extra:  # names only: a mistyped credential's value must not be shown
            raise ConfigError(
                f"unknown option(s) {', '.join(sorted(extra))} in a {self.scheme}:// URL; "
                f"known: {', '.join(sorted(set(known) | COMMON_URL_OPTIONS))}"
            )


def parse_url(url: str) -> ConnectionURL:
    if not isinstance(url, str) or "://" not in url:
        raise ConfigError("a connection URL looks like 'scheme://…', for example 'local:///data'")
    parts = urlsplit(url)
    if parts.netloc and "@" in url.split(parts.netloc, 1)[1]:
        # "user:pa/ss@host" splits as host "pa" and path "/ss@host": whatever is after
        # the host part would be shown in messages, password pieces included.
        raise ConfigError(
            "the connection URL has an '@' after its host part: percent-encode '/', '?', "
            "'#' and '@' in user names and passwords (%2F, %3F, %23, %40), or pass the "
            "password as ?password_env=NAME"
        )
    scheme = parts.scheme.lower()
    if not scheme:
        raise ConfigError("the connection URL has no scheme")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError("the connection URL has an invalid port") from None
    query: dict[str, str] = {}
    secrets: dict[str, Secret] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_option(key):
            secrets[key.lower() if key.lower() != "apikey" else "api_key"] = Secret(value)
        else:
            query[key] = value
    return ConnectionURL(
        scheme=scheme,
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
        password=Secret(unquote(parts.password)) if parts.password else None,
        path=unquote(parts.path),
        query=query,
        secrets=secrets,
    )


def default_url() -> str:
    return os.environ.get(URL_ENV) or DEFAULT_URL


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML config: ``url = "…"`` and optional ``[backend_options.<name>]``.

    A ``[vectorport]`` table is read if present, so the settings can live in a
    ``pyproject.toml``-style file among others.
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {exc}") from exc
    table = data.get("vectorport", data)
    if not isinstance(table, dict) or not isinstance(table.get("url"), str):
        raise ConfigError(f"config file {os.fspath(path)!r} needs a string 'url'")
    return table
