"""A base for filter compilers: AST in, native filter out, memoised.

Apps and agents send the same few filters again and again, and composing a native
filter (SQL, an expression string, a filter object) costs far more than a dict lookup.
The AST is immutable, so a compiled filter can be kept, provided the compiled form is
immutable too or never changed by its users.

The memo key is ``repr(node)``, not the node: nodes compare ``1 == 1.0`` equal (one
filter by value), yet a compiler may bind the literal the caller wrote. A compiler
whose output depends on more than the node (an engine line, a namespace's columns)
keeps one instance per such context, or passes the context to :meth:`compile`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import ClassVar, Generic, TypeVar

from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Condition, Filter, walk

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


class Memo(Generic[K, V]):
    """A thread-safe least-recently-used map of computed values."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()  # outside the lock: compilers may be slow, results are equal
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class FilterCompiler(ABC, Generic[T]):
    """Subclasses implement :meth:`build`; :meth:`compile` memoises it.

    ``build`` raises :class:`UnsupportedFeatureError` for what the engine cannot express
    exactly (never dropping a clause), before any I/O.
    """

    cache_size: ClassVar[int] = 512

    cache_clear: Callable[[], None]
    """Forget every compiled filter (benchmarks measure cold compiles with it). Set per
    instance, so that only compilers, not their classes, look like caches."""

    def __init__(self) -> None:
        self._memo: Memo[str, T] = Memo(self.cache_size)
        self._by_identity: dict[int, tuple[Filter, str, T]] = {}
        self.cache_clear = self._clear

    def compile(self, node: Filter) -> T:
        # The facade hands over the very node it parsed for a filter it has seen (its
        # parse is cached per frozen filter), so the node itself is tried first: the
        # repr of a filter costs a few µs a query. The entry holds the node, so its id
        # cannot be reused while it is there; a hit still counts as a use of the memo's
        # entry (its least-recently-used order, its size), the one cache that decides.
        hit = self._by_identity.get(id(node))
        if hit is not None and hit[0] is node:
            known = hit[2]
            return self._memo.get(hit[1], lambda: known)
        key = repr(node)
        value = self._memo.get(key, lambda: self.build(node))
        if len(self._by_identity) >= self.cache_size:
            self._by_identity.clear()
        self._by_identity[id(node)] = (node, key, value)
        return value

    def _clear(self) -> None:
        self._by_identity.clear()
        self._memo.clear()

    @abstractmethod
    def build(self, node: Filter) -> T:
        """The native filter for ``node``, not memoised."""


FLOAT64_EXACT_LIMIT = 2**53
"""The magnitude from which a float64 no longer holds every integer: an engine that
compares numbers as float64 takes ``2**53 + 1`` for ``2**53`` (and an int beyond it for
the float next to it)."""


def check_exact_number(backend: str, op: str, value: object, reason: str) -> None:
    """Refuse a number operand of magnitude :data:`FLOAT64_EXACT_LIMIT` or more, for an
    engine that compares numbers as float64 (``reason`` says so in the backend's words):
    below it every int and float compares there as the contract compares them, by value."""
    if (isinstance(value, (int, float)) and not isinstance(value, bool)
            and abs(value) >= FLOAT64_EXACT_LIMIT):
        raise UnsupportedFeatureError(backend, f"{op} with a number of magnitude 2^53 or more",
                                      reason)


def refuse_inexact_numbers(node: Filter, backend: str, reason: str) -> None:
    """:func:`check_exact_number` for every operand of ``node``, before it is compiled."""
    for part in walk(node):
        if isinstance(part, Condition):
            values = part.value if isinstance(part.value, tuple) else (part.value,)
            for value in values:
                check_exact_number(backend, part.op, value, reason)


__all__ = ["FLOAT64_EXACT_LIMIT", "FilterCompiler", "Memo", "check_exact_number",
           "refuse_inexact_numbers"]
