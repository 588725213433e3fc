"""Workspace paths, search index names, and how they map onto vectorport's rules.

A search index name follows Mastra's rule, a SQL identifier: a letter or underscore
first, then letters, digits and underscores, at most 63 characters. vectorport's own
index names are stricter (``^[a-z][a-z0-9_]{2,44}$``, portable to every backend), so a
name that is not already a valid vectorport name is mapped to a lower-case stem plus
a hash of the original: ``MyDocs`` and ``mydocs`` stay two different indexes.

Document ids are workspace paths in one canonical form, ``/dir/file.md``: ``docs/a.md``,
``./docs/a.md`` and ``/docs/a.md`` are the same document, and ``..`` is refused.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

from vectorport.core import validation
from vectorport.core.errors import ValidationError

SEARCH_INDEX_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
MAX_PATH_BYTES = 500  # record ids are "<path>#000000", at most 512 bytes


def check_search_index_name(name: object) -> str:
    if not isinstance(name, str) or not SEARCH_INDEX_NAME_RE.match(name):
        raise ValidationError(
            f"invalid search index name {name!r}: start with a letter or underscore, then use "
            "only letters, digits and underscores, at most 63 characters"
        )
    return name


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=4).hexdigest()


def store_index_name(search_index_name: str) -> str:
    """The vectorport index holding a search index: the name itself when it is already
    valid, otherwise ``<lower-case stem>_<hash>``."""
    name = check_search_index_name(search_index_name)
    if validation.INDEX_NAME_RE.match(name):
        return name
    stem = re.sub(r"_+", "_", name.lower()).strip("_")
    if not stem or not stem[0].isalpha():
        stem = "ws_" + stem
    stem = stem[: 45 - 9].rstrip("_")
    return validation.index_name(f"{stem}_{_digest(name)}")


def default_search_index_name(workspace_id: str) -> str:
    """``<workspace id>_search``, the id cut and cleaned to an identifier."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", workspace_id).strip("_") or "workspace"
    if stem[0].isdigit():
        stem = "w_" + stem
    return check_search_index_name(stem[:56] + "_search")


def default_workspace_id(base: str | None) -> str:
    """Stable across runs for the same folder, so a re-opened workspace finds its index."""
    return "workspace" if base is None else f"workspace_{_digest(base)}"


def normalize_path(path: object) -> str:
    """The canonical document id of a workspace path (``/dir/file``)."""
    if not isinstance(path, str) or not path.strip():
        raise ValidationError(f"a document path must be a non-empty str, got {path!r}")
    if "\x00" in path:
        raise ValidationError("a document path cannot contain NUL")
    parts = [p for p in PurePosixPath(path.replace("\\", "/")).parts if p not in ("/", ".")]
    if ".." in parts:
        raise ValidationError(f"a document path cannot leave the workspace: {path!r}")
    if not parts:
        raise ValidationError(f"{path!r} names the workspace itself, not a document")
    canonical = "/" + "/".join(parts)
    if len(canonical.encode("utf-8")) > MAX_PATH_BYTES:
        raise ValidationError(f"document path is longer than {MAX_PATH_BYTES} UTF-8 bytes")
    return canonical


def entry_key(path: str, chunk: int) -> str:
    """The record id of one entry (chunk) of a document."""
    return f"{path}#{chunk:06d}"
