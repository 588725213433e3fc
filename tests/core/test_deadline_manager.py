"""``vectorport.deadline`` as a class (every facade call enters one): the behaviour of the
``@contextmanager`` it replaced — nesting keeps the earlier end, ``None`` adds no bound,
a bad value is refused on entry, it decorates functions, it follows async tasks — and
one object is one block at a time."""

from __future__ import annotations

import asyncio

import pytest

from vectorport import deadline
from vectorport.core.retry import remaining


def _left() -> float:
    left = remaining()
    assert left is not None
    return left


def test_nesting_keeps_the_earlier_end() -> None:
    assert remaining() is None
    with deadline(5):
        assert 4 < _left() <= 5
        with deadline(100):
            assert _left() <= 5
        with deadline(1):
            assert _left() <= 1
        with deadline(None):
            assert 4 < _left() <= 5
    assert remaining() is None


def test_a_bad_value_is_refused_on_entry() -> None:
    manager = deadline(-1)
    with pytest.raises(ValueError, match="positive"), manager:
        pass
    assert remaining() is None


def test_it_decorates_and_resets_after_an_error() -> None:
    @deadline(2)
    def inner(depth: int) -> float:
        return _left() if depth == 0 else inner(depth - 1)

    assert 1 < inner(3) <= 2
    with pytest.raises(KeyError), deadline(3):
        raise KeyError("x")
    assert remaining() is None


def test_one_object_is_one_block_at_a_time() -> None:
    manager = deadline(3)
    with manager:
        pass
    with manager:  # again, after the first block ended
        assert _left() <= 3
        with pytest.raises(RuntimeError, match="already in use"), manager:
            pass
    assert remaining() is None


def test_it_follows_an_async_task() -> None:
    async def task() -> float:
        with deadline(7):
            await asyncio.sleep(0)
            return _left()

    assert 6 < asyncio.run(task()) <= 7
    assert remaining() is None
