"""The small HTTP server both emulators stand on: routing, JSON, faults, one-send replies.

Responses are written in a single ``send`` (header and body together): a split write
costs ~40 ms per request through delayed ACKs, which would make the emulators, and the
adapters' tests through them, needlessly slow.

:class:`Faults` injects what a hosted service does to its clients: a rate of 429 / 503
answers, added latency, eventual-consistency lag (a write becomes visible to reads
only ``lag_seconds`` later), dropped responses (the request was handled, a write was
applied, and then the connection closes without an answer: what a client's retry of a
non-idempotent call must survive) and a stalled server (the connection is accepted and
the request read, but no answer ever comes: what client timeouts are for). Emulators
call :meth:`Faults.visible_at` when storing a write and compare with
:func:`time.monotonic` when reading.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

try:  # the pinecone and turbopuffer extras bring it; the emulators run without it too
    import orjson
except ImportError:  # pragma: no cover - every test environment has it
    orjson = None  # type: ignore[assignment]


def _loads(body: bytes) -> Any:
    """A request body's JSON. orjson reads an upsert of a thousand 384-float vectors
    about four times faster than the json module, which was most of an emulator's time
    under a bulk load; what orjson refuses and the json module accepts (``NaN``,
    ``Infinity``, lone surrogates) goes to the json module, so the bodies an emulator
    takes and the errors it gives stay as they were. One difference remains: an integer
    beyond 64 bits reads as the nearest double, which the emulators then refuse wherever
    an integer is due, as a typed service's parser would."""
    if orjson is not None:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


@dataclass
class Faults:
    """Switchable misbehaviour. Change the fields at any time; they apply at once."""

    error_rate: float = 0.0
    error_statuses: tuple[int, ...] = (429, 503)
    latency_seconds: float = 0.0
    lag_seconds: float = 0.0
    drop_rate: float = 0.0
    stall: bool = False
    seed: int | None = None
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def visible_at(self) -> float:
        """When a write made now becomes visible to reads."""
        return time.monotonic() + self.lag_seconds

    def injected_status(self) -> int | None:
        if self.error_rate and self._random.random() < self.error_rate:
            return self._random.choice(self.error_statuses)
        return None

    def drops_response(self) -> bool:
        """Whether to close the connection instead of sending this (already made) answer."""
        return bool(self.drop_rate) and self._random.random() < self.drop_rate


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    match: dict[str, str]

    def json(self) -> Any:
        if not self.body:
            return {}
        return _loads(self.body)

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.params.get(name)
        return values[0] if values else default


@dataclass(frozen=True)
class Response:
    status: int
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()

    def encode(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body, separators=(",", ":")).encode()


class HttpError(Exception):
    """Raise from a handler to answer with this status and JSON body."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


Handler = Callable[[Request], Response]
ErrorBody = Callable[[int, str], Any]
Unrouted = Callable[[Request], Response]


class MethodNotAllowedError(Exception):
    """The path is served, but not with this method."""


class Router:
    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def route(self, method: str, pattern: str) -> Callable[[Handler], Handler]:
        """``pattern`` is a path with ``{name}`` parts, each matching one path segment."""
        regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "$")

        def register(fn: Handler) -> Handler:
            self._routes.append((method, regex, fn))
            return fn

        return register

    def find(self, method: str, path: str) -> tuple[Handler, dict[str, str]] | None:
        path_found = False
        for route_method, regex, fn in self._routes:
            m = regex.match(path)
            if m:
                path_found = True
                if route_method == method:
                    return fn, m.groupdict()
        if path_found:
            raise MethodNotAllowedError(method)
        return None


class _StopRequestedError(Exception):
    """Raised by the serving loop's own hook to leave it once :meth:`EmulatorServer.stop`
    was asked."""


class _StoppableHTTPServer(ThreadingHTTPServer):
    """A server whose ``serve_forever`` also ends when ``stopping`` is set.

    ``BaseServer.shutdown()`` waits without limit for the serving loop to acknowledge,
    which never happens when the loop never started, already returned, or runs in a daemon
    thread that interpreter exit has frozen (a ``with running()`` left open at exit is
    closed by the garbage collector then): the process hung at exit. The loop polls this
    event instead, through the hook ``serve_forever`` calls after every poll, so stopping
    needs no answer from it."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 stopping: threading.Event) -> None:
        self.stopping = stopping
        super().__init__(address, handler)

    def service_actions(self) -> None:
        if self.stopping.is_set():
            raise _StopRequestedError


STOP_WAIT_SECONDS = 5.0
"""The longest :meth:`EmulatorServer.stop` waits for the serving thread (it leaves its
loop within one 0.5 s poll)."""


class EmulatorServer:
    """A threaded HTTP server answering through a :class:`Router`."""

    def __init__(
        self,
        router: Router,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: Faults | None = None,
        error_body: ErrorBody = lambda status, message: {"error": message},
        authorize: Callable[[Request], None] | None = None,
        fault_exempt: Callable[[Request], bool] = lambda request: False,
        unrouted: Unrouted | None = None,
        gzip_min_bytes: int | None = None,
    ) -> None:
        """``unrouted`` answers requests no route serves (default: a 404 in ``error_body``);
        emulators answer in their vendor's format that the route is not emulated.
        ``gzip_min_bytes``: compress answers at least this large when the client sends
        ``Accept-Encoding: gzip`` (``None``: never)."""
        self.router = router
        self.unrouted = unrouted
        self.gzip_min_bytes = gzip_min_bytes
        self._stopping = threading.Event()
        self._stop_lock = threading.Lock()
        self._stopped = False
        self.faults = faults or Faults()
        self.error_body = error_body
        self.authorize = authorize
        self.fault_exempt = fault_exempt
        self.requests_served = 0
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet by default
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if server.faults.stall:
                    # Accepted and read, never answered; released only when the server
                    # stops, so a client without a timeout hangs as it would in production.
                    server._stopping.wait()
                    self.close_connection = True
                    return
                response = server.dispatch(self.command, self.path, dict(self.headers), body)
                if server.faults.drops_response():
                    self.close_connection = True  # handled (and applied), but never answered
                    return
                payload = response.encode()
                head = [f"HTTP/1.1 {response.status} {self.responses.get(response.status, ('',))[0]}"]
                headers = dict(response.headers)
                if payload and "Content-Type" not in headers:
                    headers["Content-Type"] = "application/json"
                accepted = (self.headers.get("Accept-Encoding") or "").lower()
                if (server.gzip_min_bytes is not None and len(payload) >= server.gzip_min_bytes
                        and "gzip" in accepted):
                    payload = gzip.compress(payload, compresslevel=1)
                    headers["Content-Encoding"] = "gzip"
                headers["Content-Length"] = str(len(payload))
                head += [f"{k}: {v}" for k, v in headers.items()]
                self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
                self.wfile.flush()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815

        self.httpd = _StoppableHTTPServer((host, port), _Handler, self._stopping)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else host
        return f"http://{host_text}:{port}"

    def dispatch(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Response:
        self.requests_served += 1
        parts = urlsplit(raw_path)
        request = Request(method, parts.path, parse_qs(parts.query), headers, body, {})
        try:
            if self.faults.latency_seconds:
                time.sleep(self.faults.latency_seconds)
            if self.authorize is not None:
                self.authorize(request)
            if not self.fault_exempt(request):
                status = self.faults.injected_status()
                if status is not None:
                    return Response(status, self.error_body(status, "injected fault"))
            try:
                found = self.router.find(method, parts.path)
            except MethodNotAllowedError:
                found = None
            if found is None:
                if self.unrouted is not None:
                    return self.unrouted(request)
                return Response(404, self.error_body(404, f"no route for {method} {parts.path}"))
            handler, match = found
            return handler(Request(method, parts.path, request.params, headers, body, match))
        except HttpError as exc:
            return Response(exc.status, exc.body)
        except json.JSONDecodeError as exc:
            return Response(400, self.error_body(400, f"invalid JSON: {exc}"))

    def start(self) -> EmulatorServer:
        self._thread = threading.Thread(target=self._serve, daemon=True,
                                        name="vectorport-emulator")
        self._thread.start()
        return self

    def _serve(self) -> None:
        self._thread = threading.current_thread()
        if self._stopping.is_set():  # stopped before this thread got to run
            return
        with suppress(_StopRequestedError):
            self.httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving, release stalled requests and close the port.

        Idempotent, and safe before :meth:`start`, from a request's thread, from an
        ``atexit`` hook or from the garbage collector at interpreter exit. It waits for the
        serving thread at most :data:`STOP_WAIT_SECONDS`, and not at all at interpreter
        exit, where daemon threads no longer run."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._stopping.set()
        thread = self._thread
        if (thread is not None and thread is not threading.current_thread()
                and not sys.is_finalizing()):
            thread.join(STOP_WAIT_SECONDS)
        self.httpd.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted or :meth:`stop` is called."""
        try:
            self._serve()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()


@contextmanager
def running(server: EmulatorServer) -> Iterator[EmulatorServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()
