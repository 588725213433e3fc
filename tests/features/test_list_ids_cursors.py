"""``list_ids`` cursors are opaque tokens bound to their listing, on every backend.

A cursor names the listing it came from (backend, index, namespace, prefix, filter); a
cursor from another listing, from ``scan``, or made up raises ``ValidationError`` instead
of silently restarting or skipping ids. Paging with honest cursors still sees every id
once, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.backends import ALL, Backend, open_backend

from vectorport import UnsupportedFeatureError, ValidationError, connect
from vectorport.core.async_store import AsyncStore
from vectorport.core.store import ListableIndex

IDS = [f"doc-{i:02d}" for i in range(12)] + [f"other-{i}" for i in range(3)]


@pytest.fixture(scope="module", params=ALL, ids=lambda b: b.name)
def listed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, Any]]:
    backend: Backend = request.param
    with open_backend(backend, tmp_path_factory.mktemp(backend.name)) as url:
        store = connect(url)
        if not store.capabilities.list_ids:
            store.close()
            pytest.skip(f"{backend.name} does not list ids")
        index = store.create_index("cursors", 2, "cosine")
        rows = [{"id": i, "vector": [1.0, 0.5], "metadata": {"n": n}} for n, i in enumerate(IDS)]
        index.upsert(rows)
        index.upsert(rows[:4], namespace="ns2")
        try:
            yield url, index
        finally:
            store.delete_index("cursors", missing_ok=True)
            store.close()


def pages(index: ListableIndex, **kwargs: Any) -> list[tuple[str, ...]]:
    out, cursor = [], None
    while True:
        page = index.list_ids(limit=5, cursor=cursor, **kwargs)
        out.append(page.ids)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


def test_honest_cursors_page_every_id_once(listed: tuple[str, Any]) -> None:
    _, index = listed
    got = [i for page in pages(index) for i in page]
    assert got == sorted(IDS)
    assert [i for p in pages(index, prefix="doc-") for i in p] == sorted(IDS[:12])


def test_cursors_are_opaque(listed: tuple[str, Any]) -> None:
    _, index = listed
    page = index.list_ids(limit=5)
    assert page.next_cursor is not None
    assert not any(i in page.next_cursor for i in page.ids)  # no raw id or offset inside


@pytest.mark.parametrize("garbage", ["doc-04", "5", "not a cursor", "eyJ2IjoxfQ", "\x00"])
def test_made_up_cursors_are_refused(listed: tuple[str, Any], garbage: str) -> None:
    _, index = listed
    with pytest.raises(ValidationError):
        index.list_ids(limit=5, cursor=garbage)


def test_foreign_cursors_are_refused(listed: tuple[str, Any]) -> None:
    _, index = listed
    cursor = index.list_ids(limit=5).next_cursor
    prefixed = index.list_ids(prefix="doc-", limit=5).next_cursor
    filtered_cursor = None
    # a backend that cannot filter a listing has nothing to check there
    with contextlib.suppress(UnsupportedFeatureError):
        filtered_cursor = index.list_ids(filter={"n": {"$gte": 0}}, limit=5).next_cursor
    with pytest.raises(ValidationError):
        index.list_ids(namespace="ns2", limit=5, cursor=cursor)
    with pytest.raises(ValidationError):
        index.list_ids(prefix="doc-", limit=5, cursor=cursor)
    with pytest.raises(ValidationError):
        index.list_ids(limit=5, cursor=prefixed)
    with pytest.raises(ValidationError):
        index.list_ids(filter={"n": {"$gte": 0}}, limit=5, cursor=cursor)
    if filtered_cursor is not None:
        with pytest.raises(ValidationError):
            index.list_ids(limit=5, cursor=filtered_cursor)
    scan_cursor = next(iter(index.scan(page_size=5))).next_cursor
    assert scan_cursor is not None
    with pytest.raises(ValidationError):
        index.list_ids(limit=5, cursor=scan_cursor)
    with pytest.raises(ValidationError):  # and the other way round
        next(iter(index.scan(page_size=5, cursor=cursor)))


def test_another_index_cursor_is_refused(listed: tuple[str, Any]) -> None:
    url, index = listed
    with connect(url) as store:
        other = store.create_index("cursors2", 2, "cosine")
        try:
            other.upsert([{"id": i, "vector": [1.0, 0.5]} for i in IDS])
            cursor = other.list_ids(limit=5).next_cursor
            with pytest.raises(ValidationError):
                index.list_ids(limit=5, cursor=cursor)
        finally:
            store.delete_index("cursors2", missing_ok=True)


def test_async_cursors_are_the_same_tokens(listed: tuple[str, Any]) -> None:
    _, index = listed

    async def run() -> None:
        store = AsyncStore(index.store)  # not closed here: the fixture owns the store
        aindex = await store.index("cursors")
        page = await aindex.list_ids(limit=5)
        assert page == index.list_ids(limit=5)
        rest = await aindex.list_ids(limit=100, cursor=page.next_cursor)
        assert list(page.ids + rest.ids) == sorted(IDS)
        with pytest.raises(ValidationError):
            await aindex.list_ids(limit=5, cursor="doc-04")
        with pytest.raises(ValidationError):
            await aindex.list_ids(namespace="ns2", limit=5, cursor=page.next_cursor)


    asyncio.run(run())
