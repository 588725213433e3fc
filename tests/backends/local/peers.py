"""Peers for the multi-process tests of the local adapter.

Each peer is a separate Python interpreter driving its own ``Store`` on one SQLite file
through the public API, by JSON lines on stdin/stdout.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

PEER = r'''
import json, sqlite3, sys
import vectorport
from vectorport.core.hooks import hookimpl

store = vectorport.connect(sys.argv[1])
held = {}
lock = None

def rows(prefix, n, dim, **meta):
    return [{"id": f"{prefix}{i}", "vector": [float(i + 1)] + [1.0] * (dim - 1),
             "metadata": {"i": i, **meta}} for i in range(n)]

def run(op, a):
    global lock
    if op == "create":
        store.create_index(a["name"], a["dim"], a.get("metric", "cosine"))
    elif op == "create_many":
        out = []
        for name in a["names"]:
            try:
                store.create_index(name, 4)
                out.append("ok")
            except Exception as exc:
                out.append(type(exc).__name__)
        return out
    elif op == "delete_index":
        store.delete_index(a["name"])
    elif op == "list_indexes":
        return store.list_indexes()
    elif op == "hold":
        held[a["name"]] = store.index(a["name"])
    elif op == "upsert":
        index = held[a["name"]] if a.get("held") else store.index(a["name"])
        return index.upsert(a["rows"], namespace=a.get("ns", ""))
    elif op == "delete":
        store.index(a["name"]).delete(a.get("ids"), filter=a.get("filter"),
                                      namespace=a.get("ns", ""))
    elif op == "delete_namespace":
        store.index(a["name"]).delete_namespace(a["ns"])
    elif op == "patch":
        return store.index(a["name"]).patch(a["id"], metadata=a["metadata"],
                                            namespace=a.get("ns", ""))
    elif op == "fetch":
        got = store.index(a["name"]).fetch(a["ids"], namespace=a.get("ns", ""))
        return {k: {"vector": r.vector.tolist(), "metadata": dict(r.metadata)}
                for k, r in got.items()}
    elif op == "count":
        return store.index(a["name"]).count(a.get("ns", ""), filter=a.get("filter"))
    elif op == "query":
        found = store.index(a["name"]).query(a["vector"], top_k=a["top_k"],
                                             namespace=a.get("ns", ""),
                                             filter=a.get("filter"))
        return [m.id for m in found]
    elif op == "workload":
        # disjoint ids per worker, a contested id per j, and patches of shared records
        index, w, dim = store.index(a["name"]), a["worker"], a["dim"]
        written, deleted = [], []
        for b in range(a["batches"]):
            batch = rows(f"w{w}-{b}-", a["size"], dim, worker=w, batch=b)
            index.upsert(batch, namespace="conc")
            written += [r["id"] for r in batch]
            gone = [r["id"] for r in batch[::3]]
            index.delete(gone, namespace="conc")
            deleted += gone
            for j in range(a["shared"]):
                index.upsert([{"id": f"same-{j}", "vector": [1.0] * dim,
                               "metadata": {"writer": w, "batch": b, "j": j}}],
                             namespace="conc")
                index.patch(f"shared-{j}", metadata={f"w{w}": b}, namespace="conc")
        return {"written": written, "deleted": deleted}
    elif op == "ingest":
        # big batches in a loop until killed; a line as each adapter write starts (from
        # the operation hooks, so the killer can aim inside it) and one when it is done
        class Announce:
            @hookimpl
            def vectorport_before_operation(self, event):
                if event.operation == "upsert":
                    print(json.dumps({"writing": b}), flush=True)

            @hookimpl
            def vectorport_after_operation(self, event, error, seconds):
                if event.operation == "upsert" and error is None:
                    print(json.dumps({"seconds": seconds}), flush=True)

        store.registry.plugins.register(Announce())
        index, dim = store.index(a["name"]), a["dim"]
        b = a["start"]
        while True:
            batch = [{"id": f"b{b}-{i}", "vector": [float(b + 1), float(i + 1)] + [0.5] * (dim - 2),
                      "metadata": {"batch": b, "i": i}, "document": f"doc {b}/{i}"}
                     for i in range(a["size"])]
            index.upsert(batch)
            print(json.dumps({"committed": b}), flush=True)
            b += 1
    elif op == "lock":
        lock = sqlite3.connect(a["path"], isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
    elif op == "unlock":
        lock.execute("ROLLBACK")
        lock.close()
    else:
        raise ValueError(op)

print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = {"ok": run(request["op"], request)}
    except Exception as exc:
        reply = {"error": type(exc).__name__, "message": str(exc)}
    print(json.dumps(reply), flush=True)
'''

_WAIT = 120.0  # seconds for one reply; generous, the machine is shared


class Peer:
    """Another process with its own ``Store`` on the same file."""

    def __init__(self, url: str, wait: bool = True) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", PEER, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if wait:
            self.ready()

    def ready(self) -> None:
        assert self.recv() == {"ready": True}

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, op: str, **args: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.process.stdin.flush()

    def recv(self, timeout: float = _WAIT) -> Any:
        reply: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        return reply

    def result(self) -> Any:
        reply = self.recv()
        if "error" in reply:
            raise AssertionError(f"peer failed: {reply['error']}: {reply['message']}")
        return reply["ok"]

    def call(self, op: str, **args: Any) -> Any:
        self.send(op, **args)
        return self.result()

    def error(self, op: str, **args: Any) -> str:
        """The name of the error the call raises in the peer."""
        self.send(op, **args)
        reply = self.recv()
        assert "error" in reply, f"{op} unexpectedly succeeded: {reply}"
        return str(reply["error"])

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class Peers:
    """Starts peers on one file and stops them all at the end of a test."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.started: list[Peer] = []

    def add(self, wait: bool = True) -> Peer:
        peer = Peer(self.url, wait)
        self.started.append(peer)
        return peer
