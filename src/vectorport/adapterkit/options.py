"""Declared options: URL options, and the index and query sections of ``backend_options``.

An adapter declares each option once (name, kind, default, allowed values) in an
:class:`OptionSpec` and reads the checked values from it. Every spec checks before any
I/O and words its errors the same way: unknown names list the known ones, bad values
say what was expected. URL problems are :class:`ConfigError` (the connection is
misconfigured); index and query option problems are :class:`ValidationError` (the call
is wrong).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vectorport.core.config import COMMON_URL_OPTIONS, ConnectionURL
from vectorport.core.errors import ConfigError, ValidationError
from vectorport.core.types import IndexSpec, QueryRequest

Kind = Literal["str", "int", "float", "seconds", "bool", "str_map", "credential", "any"]
"""``seconds``: a positive number; ``str_map``: a dict of str to str; ``credential``: a
URL credential (``NAME`` and ``NAME_env``), only declared here, read with
:meth:`ConnectionURL.credential`; ``any``: checked by the option's ``check``."""

Where = Literal["URL", "index", "index_params", "query"]

_EXPECTED: dict[str, str] = {
    "str": "a string", "int": "an integer", "float": "a number",
    "seconds": "a positive number of seconds", "bool": "true or false",
    "str_map": "a dict of strings to strings", "any": "valid",
}


def within(low: float, high: float) -> Callable[[Any], str | None]:
    """A ``check`` for numbers: ``low <= value <= high``."""

    def check(value: Any) -> str | None:
        return None if low <= value <= high else f"must be in [{low}, {high}], got {value!r}"

    return check


def positive(value: Any) -> str | None:
    """A ``check`` for numbers: ``value > 0`` (counts, sizes, thresholds)."""
    return None if value > 0 else f"must be positive, got {value!r}"


def matching(pattern: re.Pattern[str], shape: str) -> Callable[[Any], str | None]:
    """A ``check`` for strings: the whole value matches ``pattern`` (``shape`` says how,
    for the error)."""

    def check(value: Any) -> str | None:
        return None if isinstance(value, str) and pattern.fullmatch(value) else shape

    return check


@dataclass(frozen=True, slots=True)
class Option:
    """One option: its name, kind, default (``None``: unset), allowed values and an
    extra ``check`` returning what is wrong (or ``None``)."""

    name: str
    kind: Kind = "str"
    default: Any = None
    choices: tuple[Any, ...] = ()
    check: Callable[[Any], str | None] | None = None
    help: str = ""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """The options of one backend at one place (``URL``, ``index`` or ``query``)."""

    backend: str
    where: Where
    options: tuple[Option, ...] = ()

    @property
    def names(self) -> frozenset[str]:
        names = {o.name for o in self.options}
        names |= {f"{o.name}_env" for o in self.options if o.kind == "credential"}
        return frozenset(names)

    def _error(self, message: str) -> Exception:
        text = f"{self.backend} {self.where} options: {message}"
        return ConfigError(text) if self.where == "URL" else ValidationError(text)

    def _unknown(self, given: set[str]) -> None:
        names = self.names | COMMON_URL_OPTIONS if self.where == "URL" else self.names
        extra = given - names
        if extra:  # names only, never a value (a mistyped credential is one)
            known = ", ".join(sorted(names)) or "none"
            raise self._error(f"unknown option(s) {', '.join(sorted(extra))}; known: {known}")

    def _bad(self, option: Option, value: Any, expected: str) -> Exception:
        shown = "" if self.where == "URL" and option.kind == "credential" else f", got {value!r}"
        return self._error(f"{option.name} must be {expected}{shown}")

    def _checked(self, option: Option, value: Any) -> Any:
        kind = option.kind
        if kind == "str" and not isinstance(value, str):
            raise self._bad(option, value, _EXPECTED[kind])
        if kind == "bool" and not isinstance(value, bool):
            raise self._bad(option, value, _EXPECTED[kind])
        if kind in ("int", "float", "seconds"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                kind == "int" and not isinstance(value, int)
            ):
                raise self._bad(option, value, _EXPECTED[kind])
            if kind == "seconds" and not value > 0:
                raise self._bad(option, value, _EXPECTED[kind])
            value = float(value) if kind != "int" else value
        if kind == "str_map" and not (isinstance(value, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
            raise self._bad(option, value, _EXPECTED[kind])
        if option.choices and value not in option.choices:
            raise self._bad(option, value, "one of " + ", ".join(map(repr, option.choices)))
        if option.check is not None:
            problem = option.check(value)
            if problem is not None:
                raise self._error(f"{option.name} {problem}")
        return value

    def parse(self, values: Mapping[str, Any] | None) -> dict[str, Any]:
        """The checked options of a ``backend_options`` section, defaults filled in
        (options without a default and not given are absent)."""
        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            raise self._error(f"the {self.backend!r} section must be a dict of options")
        self._unknown({str(k) for k in values})
        out: dict[str, Any] = {}
        for option in self.options:
            if option.name in values:
                out[option.name] = self._checked(option, values[option.name])
            elif option.default is not None:
                out[option.name] = option.default
        return out

    def index(self, spec: IndexSpec) -> dict[str, Any]:
        """The index's ``backend_options`` section for this backend, checked."""
        return self.parse(spec.backend_options.get(self.backend))

    def query(self, request: QueryRequest) -> dict[str, Any]:
        """The query's ``backend_options`` section for this backend, checked."""
        return self.parse(request.options_for(self.backend))

    def url(self, url: ConnectionURL) -> dict[str, Any]:
        """The URL's options, converted from text by kind (credentials are left to
        :meth:`ConnectionURL.credential`, so their values are never read or shown)."""
        self._unknown(set(url.query) | set(url.secrets))
        out: dict[str, Any] = {}
        for option in self.options:
            if option.kind == "credential":
                continue
            raw = url.option(option.name)
            if raw is None:
                if option.default is not None:
                    out[option.name] = option.default
                continue
            out[option.name] = self._checked(option, self._from_text(url, option, raw))
        return out

    def _from_text(self, url: ConnectionURL, option: Option, raw: str) -> Any:
        # Numbers are read by ConnectionURL, so URL numbers are worded one way everywhere.
        kind, name = option.kind, option.name
        if kind == "int":
            return url.int_option(name, 0)
        if kind == "float":
            return url.float_option(name, 0.0)
        if kind == "seconds":
            return url.seconds_option(name, 1.0)
        if kind == "bool":
            lowered = raw.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise self._bad(option, raw, _EXPECTED[kind])
        return raw


__all__ = ["Kind", "Option", "OptionSpec", "Where", "matching", "positive", "within"]
