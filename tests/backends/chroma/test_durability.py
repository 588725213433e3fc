"""Chroma keeps what it had: crashes, concurrent writers of one id, concurrent patches.

Real processes and a real SIGKILL: a writer replacing records (documents added and
removed, keys changing) is killed mid-write; the folder must reopen and every record be
whole (one of the versions written, never lost, never a mix). Concurrent writers of one
id, in threads and in processes, must leave exactly one writer's record; concurrent
patches of distinct keys must keep every key, with ``$exists`` agreeing with ``fetch``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import vectorport

IDS = [f"r{i}" for i in range(20)]


def version(rid: str, n: int) -> dict[str, object]:
    """Version ``n`` of a record: keys, kinds and document all change with ``n``."""
    metadata: dict[str, object] = {"v": n, f"only{n % 3}": f"{rid}-{n}"}
    if n % 2:
        metadata["odd"] = 1.5
    return {"id": rid, "vector": [1.0, float(n % 7) + 0.5],
            "metadata": metadata, "document": f"doc {rid} {n}" if n % 2 == 0 else None}


def consistent(record: vectorport.Record) -> bool:
    n = record.metadata["v"]
    assert isinstance(n, int)
    want = version(record.id, n)
    return (dict(record.metadata) == want["metadata"] and record.document == want["document"]
            and bool(np.allclose(record.vector, want["vector"], rtol=1e-6)))


WRITER = textwrap.dedent("""
    import sys, vectorport
    sys.path.insert(0, sys.argv[3])
    from test_durability import IDS, version
    store = vectorport.connect(sys.argv[1])
    index = store.index("crash")
    n = int(sys.argv[2])
    print("ready", flush=True)
    while True:
        n += 1
        index.upsert([version(rid, n) for rid in IDS])
        index.patch(IDS[n % len(IDS)], metadata={"v": n, "odd": None, "only0": None,
            "only1": None, "only2": None, f"only{n % 3}": f"{IDS[n % len(IDS)]}-{n}",
            **({"odd": 1.5} if n % 2 else {})},
            document=f"doc {IDS[n % len(IDS)]} {n}" if n % 2 == 0 else None)
""")


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_sigkill_mid_write_loses_nothing(tmp_path: Path) -> None:
    url = f"chroma://{tmp_path / 'db'}"
    setup = textwrap.dedent("""
        import sys, vectorport
        sys.path.insert(0, sys.argv[2])
        from test_durability import IDS, version
        with vectorport.connect(sys.argv[1]) as store:
            store.create_index("crash", 2, "cosine").upsert([version(r, 0) for r in IDS])
    """)
    here = str(Path(__file__).parent)
    done = run_python(setup, url, here)
    assert done.returncode == 0, done.stderr
    for round_, delay in enumerate((0.4, 0.9, 1.7)):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, url, str(round_ * 10_000), here],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        check = textwrap.dedent("""
            import sys, vectorport
            sys.path.insert(0, sys.argv[2])
            from test_durability import IDS, consistent
            with vectorport.connect(sys.argv[1]) as store:
                index = store.index("crash")
                got = index.fetch(IDS)
                assert sorted(got) == sorted(IDS), sorted(got)
                bad = [r for r in got.values() if not consistent(r)]
                assert not bad, bad
                assert index.count() == len(IDS)
                assert len(index.query([1.0, 1.0], top_k=50)) == len(IDS)
                assert index.count(filter={"odd": {"$exists": True}}) == sum(
                    "odd" in r.metadata for r in got.values())
            print("ok")
        """)
        checked = run_python(check, url, here)
        assert checked.returncode == 0 and "ok" in checked.stdout, checked.stderr[-3000:]


def test_removing_a_document_keeps_the_record(tmp_path: Path) -> None:
    with vectorport.connect(f"chroma://{tmp_path / 'db'}") as store:
        index = store.create_index("docs", 2, "cosine")
        index.upsert([{"id": "a", "vector": [1, 0], "metadata": {"k": 1}, "document": "hello"}])
        index.upsert([{"id": "a", "vector": [0, 1], "metadata": {"j": 2}}])
        got = index.fetch(["a"])["a"]
        assert (dict(got.metadata), got.document, list(got.vector)) == ({"j": 2}, None, [0, 1])
        match = index.query([0, 1], top_k=1, include_documents=True)[0]
        assert match.document is None
        index.patch("a", metadata={"x": 1})  # a patch without a document keeps it removed
        assert index.fetch(["a"])["a"].document is None
        index.patch("a", document="back")
        assert index.fetch(["a"])["a"].document == "back"
        assert index.query([0, 1], top_k=1, include_documents=True)[0].document == "back"


def upsert_many(url: str, writer: int, rounds: int) -> None:
    with vectorport.connect(url) as store:
        index = store.index("race")
        for n in range(rounds):
            index.upsert([{"id": "same", "vector": [1, 0],
                           "metadata": {"writer": writer, f"w{writer}_{n % 2}": n}}])


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_concurrent_upserts_of_one_id_never_merge(tmp_path: Path, mode: str) -> None:
    url = f"chroma://{tmp_path / 'db'}"
    with vectorport.connect(url) as store:
        index = store.create_index("race", 2, "cosine")
        if mode == "threads":
            workers: list[threading.Thread | mp.process.BaseProcess] = [
                threading.Thread(target=upsert_many, args=(url, w, 30)) for w in range(4)]
        else:
            ctx = mp.get_context("spawn")
            workers = [ctx.Process(target=upsert_many, args=(url, w, 30)) for w in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        got = dict(index.fetch(["same"])["same"].metadata)
        writer = got["writer"]
        assert set(got) == {"writer", f"w{writer}_1"}, got
        for key in got:
            assert index.count(filter={key: {"$exists": True}}) == 1


def patch_keys(url: str, writer: int, keys: int) -> None:
    with vectorport.connect(url) as store:
        index = store.index("patches")
        for k in range(keys):
            assert index.patch("p", metadata={f"w{writer}_{k}": k})


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_concurrent_patches_keep_every_key(tmp_path: Path, mode: str) -> None:
    url = f"chroma://{tmp_path / 'db'}"
    with vectorport.connect(url) as store:
        index = store.create_index("patches", 2, "cosine")
        index.upsert([{"id": "p", "vector": [1, 0], "metadata": {"base": True}}])
        if mode == "threads":
            workers: list[threading.Thread | mp.process.BaseProcess] = [
                threading.Thread(target=patch_keys, args=(url, w, 15)) for w in range(4)]
        else:
            ctx = mp.get_context("spawn")
            workers = [ctx.Process(target=patch_keys, args=(url, w, 15)) for w in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        got = dict(index.fetch(["p"])["p"].metadata)
        want = {"base": True} | {f"w{w}_{k}": k for w in range(len(workers)) for k in range(15)}
        assert got == want
        for key in want:
            assert index.count(filter={key: {"$exists": True}}) == 1, key


def test_a_folder_that_does_not_open_says_how_to_recover(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    with vectorport.connect(f"chroma://{folder}") as store:
        store.create_index("docs", 2, "cosine")
    done = run_python(textwrap.dedent("""
        import sys, vectorport
        try:
            vectorport.connect("chroma://" + sys.argv[1])
        except vectorport.VectorportError as exc:
            print(type(exc).__name__, exc)
        else:
            print("opened")
    """), str(folder))
    assert done.stdout.startswith("opened"), done.stderr
    (folder / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    done = run_python(textwrap.dedent("""
        import sys, vectorport
        try:
            vectorport.connect("chroma://" + sys.argv[1]).list_indexes()
        except vectorport.VectorportError as exc:
            print(type(exc).__name__, exc)
        else:
            print("opened")
    """), str(folder))
    assert "chroma vacuum" in done.stdout and "Error" in done.stdout.split()[0], (
        done.stdout + done.stderr[-2000:])
