"""The reversible names vectorport uses inside turbopuffer.

Namespaces. turbopuffer names match ``[A-Za-z0-9-_.]{1,128}``. The data of vectorport
namespace ``ns`` of index ``idx`` lives in ``{prefix}{idx}-{ns}``, and the default
namespace ``""`` in ``{prefix}{idx}-_``. Index names never contain ``-`` and vectorport
namespaces never start with ``_``, so splitting at the first ``-`` after the prefix gives
both parts back, and ``{prefix}{idx}-`` lists exactly one index's namespaces. The index
catalog is ``{prefix}_catalog`` (no index name starts with ``_``). The default prefix is
``vectorport.``; ``?prefix=`` changes it (so several apps can share one organisation).

Record ids. turbopuffer ids are strings of at most 64 bytes; vectorport ids may have
512. An id that fits (and does not start with ``~``) is used as is; any other becomes
``~`` + the base64url SHA-256 of its UTF-8 bytes. The original id is always stored in
the ``vp_id`` attribute, which is what the adapter reads back.

Metadata. turbopuffer keeps one type per attribute, while a vectorport field may hold a
str in one record and an int in the next. Each field ``f`` is therefore stored in one of
five typed columns, chosen by the value's kind: ``s__f`` (string), ``i__f`` (int, i64),
``f__f`` (float), ``b__f`` (bool), ``l__f`` (``[]string``). All five are declared
together the first time ``f`` is written, so a field's columns exist all or none. The
document is in ``vp_doc`` (not filterable); user fields can never collide with these
names, as every user column has a one-letter kind and ``__`` in front.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from dataclasses import dataclass

DEFAULT_PREFIX = "vectorport."
PREFIX_RE = re.compile(r"^[A-Za-z0-9_.\-]{0,18}$")
DEFAULT_NAMESPACE_PART = "_"
CATALOG_SUFFIX = "_catalog"

ID_ATTRIBUTE = "vp_id"
DOCUMENT_ATTRIBUTE = "vp_doc"
VECTOR_ATTRIBUTE = "vector"
MAX_NATIVE_ID_BYTES = 64
HASHED_ID_MARK = "~"

KINDS: tuple[str, ...] = ("s", "i", "f", "b", "l")
KIND_TYPES: dict[str, str] = {
    "s": "string", "i": "int", "f": "float", "b": "bool", "l": "[]string",
}
_COLUMN_RE = re.compile(r"^([sifbl])__([A-Za-z_][A-Za-z0-9_]{0,63})$")


@dataclass(frozen=True, slots=True)
class Names:
    """Name mapping for one configured prefix."""

    prefix: str = DEFAULT_PREFIX

    @property
    def catalog(self) -> str:
        return f"{self.prefix}{CATALOG_SUFFIX}"

    def index_prefix(self, index: str) -> str:
        """Every turbopuffer namespace of ``index`` starts with this, and no other does."""
        return f"{self.prefix}{index}-"

    def namespace(self, index: str, namespace: str) -> str:
        return self.index_prefix(index) + (namespace or DEFAULT_NAMESPACE_PART)

    def parse(self, native: str) -> tuple[str, str] | None:
        """``(index, namespace)`` of a turbopuffer namespace name, or ``None``."""
        if not native.startswith(self.prefix):
            return None
        index, sep, part = native[len(self.prefix):].partition("-")
        if not sep or not part or index.startswith("_"):
            return None
        return index, "" if part == DEFAULT_NAMESPACE_PART else part


def native_id(record_id: str) -> str:
    """The turbopuffer id of a record id (itself when it fits)."""
    raw = record_id.encode("utf-8")
    if len(raw) <= MAX_NATIVE_ID_BYTES and not record_id.startswith(HASHED_ID_MARK):
        return record_id
    digest = hashlib.sha256(raw).digest()
    return HASHED_ID_MARK + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def column(kind: str, field: str) -> str:
    return f"{kind}__{field}"


def field_columns(field: str) -> dict[str, str]:
    """The five typed columns of a field, by kind."""
    return {kind: column(kind, field) for kind in KINDS}


@functools.lru_cache(maxsize=4096)
def parse_column(name: str) -> tuple[str, str] | None:
    """``(kind, field)`` of a metadata column, or ``None`` for any other attribute
    (asked of every attribute of every row returned: the few names an index has are
    remembered rather than matched again)."""
    m = _COLUMN_RE.match(name)
    return (m.group(1), m.group(2)) if m else None
