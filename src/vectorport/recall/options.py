"""The settings of semantic recall that need more than a type check.

``message_range`` is a number of neighbours on each side of a match, or a
``{"before": n, "after": m}`` mapping. The default index name is derived from the
embedder's name and dimension, so two embedders never share an index (their vectors
would not be comparable) and the same embedder always finds its own again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from vectorport.core import validation
from vectorport.core.errors import ValidationError
from vectorport.embedders.cache import CachedEmbedder

Scope: TypeAlias = Literal["thread", "resource"]
SCOPES: tuple[Scope, ...] = ("thread", "resource")

INDEX_PREFIX = "recall_"
_MAX_INDEX_NAME = 45  # CONTRACT §1: ^[a-z][a-z0-9_]{2,44}$


def _count(value: Any, label: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{label} must be an int >= 0, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class MessageRange:
    """How many messages of context to take before and after each match."""

    before: int = 1
    after: int = 1

    def __post_init__(self) -> None:
        _count(self.before, "message_range.before")
        _count(self.after, "message_range.after")

    @classmethod
    def of(cls, value: int | Mapping[str, int] | MessageRange) -> MessageRange:
        if isinstance(value, MessageRange):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - {"before", "after"}
            if unknown:
                raise ValidationError(f"message_range takes 'before' and 'after', not {sorted(unknown)}")
            return cls(value.get("before", 0), value.get("after", 0))
        count = _count(value, "message_range")
        return cls(count, count)


def check_scope(value: object) -> Scope:
    if value not in SCOPES:
        raise ValidationError(f"scope must be 'thread' or 'resource', got {value!r}")
    return value


def check_threshold(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValidationError(f"threshold must be a number in [0, 1], got {value!r}")
    return float(value)


def check_top_k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"top_k must be a positive int, got {value!r}")
    return value


def embedder_label(embedder: object) -> str:
    """What an embedder calls its model: ``model`` or ``name``, else its class name."""
    while isinstance(embedder, CachedEmbedder):
        embedder = embedder.inner
    for attribute in ("model", "name"):
        value = getattr(embedder, attribute, None)
        if isinstance(value, str) and value:
            return value
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type(embedder).__name__)


def default_index_name(embedder: object, dimension: int) -> str:
    """``recall_<embedder>_<dimension>``, cut to the portable length with a hash of the
    full label when the name would be too long, so distinct models stay distinct."""
    label = re.sub(r"[^a-z0-9]+", "_", embedder_label(embedder).lower()).strip("_") or "embedder"
    suffix = f"_{dimension}"
    room = _MAX_INDEX_NAME - len(INDEX_PREFIX) - len(suffix)
    if len(label) > room:
        digest = hashlib.blake2b(label.encode("utf-8"), digest_size=4).hexdigest()
        label = label[: room - len(digest) - 1].rstrip("_") + "_" + digest
    return validation.index_name(INDEX_PREFIX + label + suffix)
