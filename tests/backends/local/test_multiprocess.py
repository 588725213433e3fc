"""One ``local://`` file shared by several real processes.

Each peer (:mod:`tests.backends.local.peers`) is a separate Python interpreter driving its own
``Store`` on the same SQLite file. Expected results come from what the processes report
they wrote, never from numbers copied from a run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.backends.local.peers import Peer, Peers

import vectorport
from vectorport.core.errors import (
    BackendError,
    ConfigError,
    IndexExistsError,
    IndexNotFoundError,
    TransientBackendError,
)
from vectorport.core.retry import NO_RETRY


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"local://{tmp_path / 'shared.db'}"


@pytest.fixture
def peers(url: str) -> Iterator[Peers]:
    pool = Peers(url)
    yield pool
    for peer in pool.started:
        peer.close()


def _rows(prefix: str, n: int, dim: int) -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i}", "vector": [float(i + 1)] + [1.0] * (dim - 1),
             "metadata": {"i": i}} for i in range(n)]


def test_writes_and_indexes_are_visible_across_processes(url: str, peers: Peers) -> None:
    peer = peers.add()
    with vectorport.connect(url) as store:
        store.create_index("docs", 4)
        assert "docs" in peer.call("list_indexes")
        mine = store.index("docs")

        peer.call("upsert", name="docs", rows=_rows("p", 6, 4))
        # the very next call sees it: count, fetch, query
        assert mine.count() == 6
        assert set(mine.fetch(["p0", "p5", "nope"])) == {"p0", "p5"}
        assert [m.id for m in mine.query([6.0, 1, 1, 1], top_k=1)] == ["p5"]

        mine.upsert(_rows("m", 3, 4), namespace="other")
        mine.delete(["p0", "p1"])
        assert peer.call("count", name="docs") == 4
        assert peer.call("count", name="docs", ns="other") == 3
        assert set(peer.call("fetch", name="docs", ids=["p0", "p2"])) == {"p2"}

        # an upsert that replaces a record, and a patch, travel too
        mine.upsert([{"id": "p2", "vector": [1, 0, 0, 0], "metadata": {"i": 99}}])
        assert peer.call("fetch", name="docs", ids=["p2"])["p2"]["metadata"] == {"i": 99}
        assert peer.call("patch", name="docs", id="p3", metadata={"tag": "x"})
        assert dict(mine.fetch(["p3"])["p3"].metadata) == {"i": 3, "tag": "x"}

        before = {rid: rec.metadata["i"] for rid, rec in mine.fetch(mine.iter_ids()).items()}
        peer.call("delete", name="docs", filter={"i": {"$gte": 4}})
        assert sorted(mine.iter_ids()) == sorted(r for r, i in before.items() if i < 4)
        peer.call("delete_namespace", name="docs", ns="other")
        assert mine.list_namespaces() == [""]
        assert mine.count(namespace="other") == 0

        peer.call("create", name="more", dim=3)
        assert store.list_indexes() == ["docs", "more"]
        assert store.describe_index("more").dimension == 3
        peer.call("delete_index", name="docs")
        assert store.list_indexes() == ["more"]
        with pytest.raises(IndexNotFoundError):
            mine.count()
        with pytest.raises(IndexNotFoundError):
            store.index("docs")


def test_concurrent_writers_end_with_the_union_of_their_writes(url: str, peers: Peers) -> None:
    dim, shared = 4, 3
    with vectorport.connect(url) as store:
        index = store.create_index("conc", dim)
        index.upsert([{"id": f"shared-{j}", "vector": [1.0] * dim, "metadata": {"j": j}}
                      for j in range(shared)], namespace="conc")
        workers = [peers.add() for _ in range(3)]
        for w, peer in enumerate(workers):  # all start before any is waited for
            peer.send("workload", name="conc", worker=w, dim=dim, batches=8, size=12,
                      shared=shared)
        reports = [peer.result() for peer in workers]

        expected = set().union(*(set(r["written"]) - set(r["deleted"]) for r in reports))
        expected |= {f"shared-{j}" for j in range(shared)} | {f"same-{j}" for j in range(shared)}
        assert set(index.iter_ids(namespace="conc")) == expected
        assert index.count("conc") == len(expected)
        fetched = index.fetch(sorted(expected), namespace="conc")
        assert set(fetched) == expected
        for rid, rec in fetched.items():
            if rid.startswith("w"):
                worker, batch, i = (int(x) for x in rid[1:].split("-"))
                assert dict(rec.metadata) == {"i": i, "worker": worker, "batch": batch}
        last_batch = 7
        for j in range(shared):
            # no patch lost: every worker's key is there, with its last value
            assert dict(fetched[f"shared-{j}"].metadata) == {
                "j": j, **{f"w{w}": last_batch for w in range(len(workers))}}
            # a contested id holds one writer's whole record, never a merge of two
            meta = dict(fetched[f"same-{j}"].metadata)
            assert set(meta) == {"writer", "batch", "j"} and meta["j"] == j
        assert workers[0].call("count", name="conc", ns="conc") == len(expected)
    with vectorport.connect(url) as fresh:  # and so does a process that opens it now
        assert set(fresh.index("conc").iter_ids(namespace="conc")) == expected


def test_processes_opening_a_new_file_at_once(url: str, peers: Peers) -> None:
    """Workers starting together all create the (same, new) file's schema."""
    started = [peers.add(wait=False) for _ in range(4)]
    for peer in started:
        peer.ready()
    for n, peer in enumerate(started):
        peer.send("create", name=f"ix{n}", dim=3)
    for peer in started:
        peer.result()
    with vectorport.connect(url) as store:
        assert store.list_indexes() == [f"ix{n}" for n in range(len(started))]


def test_concurrent_create_has_exactly_one_winner(url: str, peers: Peers) -> None:
    names = [f"race{i}" for i in range(8)]
    first, second = peers.add(), peers.add()
    first.send("create_many", names=names)
    second.send("create_many", names=list(reversed(names)))
    a, b = first.result(), dict(zip(reversed(names), second.result(), strict=True))
    for name, outcome in zip(names, a, strict=True):
        assert sorted([outcome, b[name]]) == ["IndexExistsError", "ok"]
    with vectorport.connect(url) as store:
        assert store.list_indexes() == sorted(names)


@pytest.mark.parametrize("new_dimension", [5, 4], ids=["other-shape", "same-shape"])
def test_stale_handle_after_delete_and_recreate(url: str, peers: Peers,
                                                new_dimension: int) -> None:
    peer = peers.add()
    with vectorport.connect(url) as store:
        stale = store.create_index("docs", 4)
        stale.upsert(_rows("old", 3, 4))
        peer.call("hold", name="docs")  # the peer's handle goes stale too

        peer.call("delete_index", name="docs")
        peer.call("create", name="docs", dim=new_dimension)
        peer.call("upsert", name="docs", rows=_rows("new", 2, new_dimension))

        with pytest.raises(IndexNotFoundError, match="open it again"):
            stale.upsert(_rows("stale", 3, 4))
        with pytest.raises(IndexNotFoundError):
            stale.query([1, 1, 1, 1], top_k=3)
        with pytest.raises(IndexNotFoundError):
            stale.fetch(["new0"])
        with pytest.raises(IndexNotFoundError):
            stale.patch("new0", metadata={"x": 1})

        store.delete_index("docs")  # and from this side, the peer's handle is stale
        store.create_index("docs", new_dimension).upsert(_rows("again", 2, new_dimension))
        assert peer.error("upsert", name="docs", held=True,
                          rows=_rows("stale", 2, 4)) == "IndexNotFoundError"
        fresh = store.index("docs")
        assert sorted(fresh.iter_ids()) == ["again0", "again1"]
    with vectorport.connect(url) as reopened:  # the file still opens, with what was written
        index = reopened.index("docs")
        assert index.dimension == new_dimension
        assert sorted(index.iter_ids()) == ["again0", "again1"]
        assert len(index.fetch(["again0"])["again0"].vector) == new_dimension


def test_sigkill_mid_write_leaves_whole_batches(url: str, tmp_path: Path) -> None:
    size, dim = 3000, 8
    with vectorport.connect(url) as store:
        store.create_index("ingest", dim, "euclidean")
    committed: set[int] = set()
    start = 0
    for _round in range(3):
        peer = Peer(url)
        try:
            peer.send("ingest", name="ingest", dim=dim, size=size, start=start)
            seconds: list[float] = []
            while True:
                reply = peer.recv()
                if "committed" in reply:
                    committed.add(reply["committed"])
                elif "seconds" in reply:
                    seconds.append(reply["seconds"])
                elif "writing" in reply and len(seconds) >= 2:
                    # a write has just started: kill it somewhere inside (a call takes
                    # about the median of the ones timed so far)
                    time.sleep(random.uniform(0.0, sorted(seconds)[len(seconds) // 2]))
                    break
                else:
                    assert "writing" in reply, reply
            os.kill(peer.process.pid, signal.SIGKILL)
            peer.process.wait(timeout=30)
            while not peer.lines.empty():  # what it reported before dying
                reply = json.loads(peer.lines.get())
                if "committed" in reply:
                    committed.add(reply["committed"])
        finally:
            peer.close()

        with sqlite3.connect(tmp_path / "shared.db") as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with vectorport.connect(url) as store:
            index = store.index("ingest")
            present: dict[int, set[int]] = {}
            for rid in index.iter_ids(page_size=5000):
                batch, i = (int(x) for x in rid[1:].split("-"))
                present.setdefault(batch, set()).add(i)
            # every batch that reported its commit is there; any other batch is either
            # wholly there (committed, killed before it could say so) or wholly absent
            assert committed <= set(present)
            assert set(present) <= set(range(max(committed) + 2))
            for batch, rows in present.items():
                assert rows == set(range(size)), f"batch {batch} is partial"
            sample = index.fetch([f"b{b}-{i}" for b in present for i in (0, size - 1)])
            for rid, rec in sample.items():
                batch, i = (int(x) for x in rid[1:].split("-"))
                assert dict(rec.metadata) == {"batch": batch, "i": i}
                assert rec.document == f"doc {batch}/{i}"
                np.testing.assert_array_equal(rec.vector[:2], [batch + 1, i + 1])
            committed = set(present)
            start = max(present) + 1


def test_a_held_write_lock_gives_a_typed_error_after_the_busy_timeout(
        url: str, tmp_path: Path, peers: Peers) -> None:
    peer = peers.add()
    with vectorport.connect(url + "?busy_timeout=0.3", retry=NO_RETRY) as store:
        index = store.create_index("docs", 4)
        index.upsert(_rows("a", 2, 4))
        peer.call("lock", path=str(tmp_path / "shared.db"))
        try:
            began = time.monotonic()
            with pytest.raises(TransientBackendError, match=r"busy_timeout=0\.3s"):
                index.upsert(_rows("b", 2, 4))
            assert 0.25 <= time.monotonic() - began < 10
            with pytest.raises(TransientBackendError):
                store.create_index("other", 4)
            # WAL: readers are not blocked by the writer
            assert index.count() == 2
            assert [m.id for m in index.query([2, 1, 1, 1], top_k=1)] == ["a1"]
        finally:
            peer.call("unlock")
        index.upsert(_rows("b", 2, 4))
        assert index.count() == 4
        assert store.list_indexes() == ["docs"]  # the refused create wrote nothing


def test_busy_timeout_option_is_checked() -> None:
    with pytest.raises(ConfigError, match="busy_timeout"):
        vectorport.connect("local:///tmp/x.db?busy_timeout=soon")
    with pytest.raises(ConfigError, match="busy_timeout"):
        vectorport.connect("local:///tmp/x.db?busy_timeout=-1")
    with pytest.raises(ConfigError, match="busy_timeout"):
        vectorport.connect("memory://?busy_timeout=1")


def test_a_file_that_is_not_a_store_gives_a_backend_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a SQLite database" * 100)
    with pytest.raises(BackendError) as caught:
        vectorport.connect(f"local://{path}")
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_a_file_of_the_earlier_format_opens_and_is_shared(tmp_path: Path) -> None:
    """Files written before indexes had generations (no seq column) still open."""
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as raw:
        raw.executescript("""
            CREATE TABLE vp_indexes (name TEXT PRIMARY KEY, spec TEXT NOT NULL);
            CREATE TABLE vp_records (index_name TEXT NOT NULL, namespace TEXT NOT NULL,
                id TEXT NOT NULL, vector BLOB NOT NULL, sparse TEXT, metadata TEXT NOT NULL,
                document TEXT, PRIMARY KEY (index_name, namespace, id)) WITHOUT ROWID;
        """)
        spec = {"name": "docs", "dimension": 2, "metric": "cosine", "sparse": False,
                "index_type": "auto", "index_params": {}, "backend_options": {}}
        raw.execute("INSERT INTO vp_indexes VALUES ('docs', ?)", (json.dumps(spec),))
        raw.execute("INSERT INTO vp_records VALUES ('docs', '', 'a', ?, NULL, ?, NULL)",
                    (np.array([1, 2], dtype="<f4").tobytes(), json.dumps({"k": 1})))
    with vectorport.connect(f"local://{path}") as one, \
            vectorport.connect(f"local://{path}") as two:
        assert dict(one.index("docs").fetch(["a"])["a"].metadata) == {"k": 1}
        two.index("docs").delete(["a"])
        assert one.index("docs").count() == 0


def test_stale_handle_in_one_process(tmp_path: Path) -> None:
    """Two stores of one process behave like two processes; one store also refuses a
    handle to an index it deleted itself."""
    url = f"local://{tmp_path / 'one.db'}"
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        stale = first.create_index("docs", 3)
        second.delete_index("docs")
        second.create_index("docs", 3)
        with pytest.raises(IndexNotFoundError):
            stale.upsert(_rows("x", 1, 3))
        again = first.index("docs")
        first.delete_index("docs")
        first.create_index("docs", 3)
        with pytest.raises(IndexNotFoundError):
            again.count()
        assert second.index("docs").count() == 0
    with vectorport.connect("memory://") as memory:
        stale = memory.create_index("docs", 3)
        memory.delete_index("docs")
        memory.create_index("docs", 3)
        with pytest.raises(IndexNotFoundError):
            stale.upsert(_rows("x", 1, 3))
        with pytest.raises(IndexExistsError):
            memory.create_index("docs", 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_store_opened_before_fork_works_in_the_child(url: str) -> None:
    """A pre-forking web server opens the store, then forks workers: each child must get
    its own SQLite connection (SQLite forbids sharing one across fork)."""
    with vectorport.connect(url) as store:
        index = store.create_index("docs", 4)
        index.upsert(_rows("parent", 2, 4))
        index.count()
        pid = os.fork()
        if pid == 0:  # the child: write through the inherited store, report by exit code
            code = 1
            try:
                index.upsert(_rows("child", 3, 4))
                code = 0 if index.count() == 5 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert sorted(index.iter_ids()) == sorted(
            [f"parent{i}" for i in range(2)] + [f"child{i}" for i in range(3)])
        index.upsert(_rows("after", 1, 4))  # the parent's connection still works
        with sqlite3.connect(url.removeprefix("local://")) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_catching_up_after_a_long_idle_spell_and_namespace_resets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that missed more writes than tombstones are kept for reloads in full; a
    namespace deleted and written again is caught up as the new contents only. (Two
    stores in one process: each has its own connection, exactly as two processes do.)"""
    from vectorport.adapters.local import storage

    monkeypatch.setattr(storage, "TOMBSTONE_HORIZON", 5)
    url = f"local://{tmp_path / 'idle.db'}"
    with vectorport.connect(url) as idle, vectorport.connect(url) as busy:
        busy.create_index("docs", 3).upsert(_rows("r", 30, 3), namespace="a")
        watcher = idle.index("docs")
        assert watcher.count("a") == 30
        writer = busy.index("docs")
        written = {f"r{i}" for i in range(30)}
        for i in range(0, 30, 2):  # many small deletes: far more than the horizon
            writer.delete([f"r{i}"], namespace="a")
            written.discard(f"r{i}")
        writer.upsert(_rows("s", 2, 3), namespace="a")
        written |= {"s0", "s1"}
        with sqlite3.connect(tmp_path / "idle.db") as raw:
            kept = raw.execute("SELECT count(*) FROM vp_tombstones").fetchone()[0]
        assert kept <= 5  # pruned
        assert set(watcher.iter_ids(namespace="a")) == written
        assert idle.index("docs").count("a") == len(written)

        writer.upsert(_rows("b", 4, 3), namespace="b")
        assert watcher.count("b") == 4
        writer.delete_namespace("b")
        writer.upsert(_rows("c", 2, 3), namespace="b")
        writer.delete(["c0"], namespace="b")
        assert sorted(watcher.iter_ids(namespace="b")) == ["c1"]
        assert sorted(watcher.list_namespaces()) == ["a", "b"]
