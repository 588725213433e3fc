"""No secret anywhere: not in a message, a repr, a traceback, any exception of the chain
(``__cause__`` and ``__context__``, with their attributes), nor a DEBUG log line of
vectorport or the clients it drives (CONTRACT §6).

Wrong passwords against a real PostgreSQL (a role with a SCRAM password), wrong API keys
against the emulators (which reject them), mistyped credential options, unencoded
passwords, and Chroma credentials that must be sent, never dropped.
"""

from __future__ import annotations

import base64
import json
import logging
import shutil
import tempfile
import threading
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import vectorport
from vectorport import BackendError, ConfigError, TransientBackendError, VectorportError
from vectorport.testing.emulators import pinecone as pinecone_emulator
from vectorport.testing.emulators import turbopuffer as turbopuffer_emulator

LOGGERS = ("vectorport", "httpx", "httpcore", "psycopg", "psycopg.pool", "urllib3",
           "pinecone", "chromadb", "turbopuffer", "pymilvus")


def _chain(exc: BaseException) -> list[BaseException]:
    """Every exception reachable through ``__cause__`` and ``__context__``."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        link = todo.pop()
        if link is None or any(link is s for s in seen):
            continue
        seen.append(link)
        todo += [link.__cause__, link.__context__]
    return seen


def _rendered(exc: BaseException) -> str:
    """All a logger or error tracker could show of ``exc``: str, repr and the full
    traceback of each link, and the repr of each link's attributes (psycopg keeps the
    failed connection, conninfo included, on ``pgconn``)."""
    parts = ["".join(traceback.format_exception(exc))]
    for link in _chain(exc):
        parts += [str(link), repr(link), repr(link.args)]
        parts += [repr(value) for value in vars(link).values()]
        for name in ("pgconn", "pgresult", "response", "body", "headers"):
            try:
                parts.append(repr(getattr(link, name, None)))
            except Exception:  # a property that cannot be read shows nothing
                continue
    return "\n".join(parts)


def _assert_clean(exc: BaseException, caplog: pytest.LogCaptureFixture,
                  *secrets: str) -> None:
    text = _rendered(exc) + "\n" + caplog.text
    for secret in secrets:
        assert secret not in text, f"{secret!r} leaked"


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


# -- PostgreSQL ----------------------------------------------------------------------------

PG_RIGHT = "Rt7-pg-Secret-right"
PG_WRONG = "Wq9-pg-Secret-wrong"


@pytest.fixture(scope="module")
def pg_socket() -> Iterator[str]:
    """A throw-away PostgreSQL whose role ``vp_pw`` must log in with a SCRAM password
    (its socket trusts everyone else); the socket directory."""
    import psycopg

    from vectorport.testing.pgvector import libpq_uri, running_postgres, url_from_env

    if url_from_env("pgvector"):
        pytest.skip("needs the throw-away server (pg_hba.conf is edited)")
    with running_postgres() as url, psycopg.connect(libpq_uri(url), autocommit=True) as conn:
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])  # type: ignore[index]
        conn.execute(f"CREATE ROLE vp_pw LOGIN PASSWORD '{PG_RIGHT}'")
        conn.execute("GRANT CREATE ON DATABASE postgres TO vp_pw")
        hba.write_text("local all vp_pw scram-sha-256\n" + hba.read_text())
        conn.execute("SELECT pg_reload_conf()")
        yield url.split("host=", 1)[1].split("&", 1)[0]


def test_a_wrong_postgres_password_is_a_clean_config_error(
        pg_socket: str, debug_logs: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigError) as info:
        vectorport.connect(f"pgvector://vp_pw:{PG_WRONG}@/postgres?host={pg_socket}")
    assert not isinstance(info.value, TransientBackendError)
    assert "password" in str(info.value)
    _assert_clean(info.value, debug_logs, PG_WRONG)


def test_a_wrong_postgres_password_from_the_environment(
        pg_socket: str, debug_logs: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VP_TEST_PG_PASSWORD", PG_WRONG)
    with pytest.raises(ConfigError) as info:
        vectorport.connect(
            f"pgvector://vp_pw@/postgres?host={pg_socket}&password_env=VP_TEST_PG_PASSWORD")
    _assert_clean(info.value, debug_logs, PG_WRONG)


def test_the_right_postgres_password_works_and_stays_hidden(
        pg_socket: str, debug_logs: pytest.LogCaptureFixture) -> None:
    url = f"pgvector://vp_pw:{PG_RIGHT}@/postgres?host={pg_socket}&schema=vp_pw_space"
    with vectorport.connect(url) as store:
        index = store.create_index("secrets_ok", 3)
        index.upsert([("a", [1.0, 0.0, 0.0])])
        assert repr(store).count(PG_RIGHT) == 0
        assert PG_RIGHT not in str(store.url) and PG_RIGHT not in repr(store.adapter)
        with pytest.raises(VectorportError) as info:
            index.upsert([("b", [1.0, 0.0])])  # a dimension error, raised by the facade
        _assert_clean(info.value, debug_logs, PG_RIGHT)
        store.delete_index("secrets_ok")
    assert PG_RIGHT not in debug_logs.text


# -- API keys against the emulators --------------------------------------------------------

RIGHT_KEY = "right-Key-0f3c9"
WRONG_KEY = "wrong-Key-7d21a"


def test_a_wrong_pinecone_key(debug_logs: pytest.LogCaptureFixture) -> None:
    with pinecone_emulator.running(api_key=RIGHT_KEY) as server:
        store = vectorport.connect(f"pinecone://?api_key={WRONG_KEY}&host={server.url}"
                                   "&timeout=5")
        assert WRONG_KEY not in repr(store.adapter) + str(store.url)
        with pytest.raises(BackendError) as info:
            store.list_indexes()
        assert not isinstance(info.value, TransientBackendError), "a wrong key is not retried"
        _assert_clean(info.value, debug_logs, WRONG_KEY)
        store.close()


def test_a_wrong_turbopuffer_key(debug_logs: pytest.LogCaptureFixture) -> None:
    with turbopuffer_emulator.running(api_key=RIGHT_KEY) as server:
        store = vectorport.connect(f"turbopuffer://?base_url={server.url}&api_key={WRONG_KEY}"
                                   "&timeout=5")
        with pytest.raises(BackendError) as info:
            store.list_indexes()
        assert not isinstance(info.value, TransientBackendError)
        _assert_clean(info.value, debug_logs, WRONG_KEY)
        store.close()


# -- option values and URLs ----------------------------------------------------------------

OPTION_SECRET = "Opt-Secret-5e8b2"


@pytest.mark.parametrize("url", [
    "pgvector://me@127.0.0.1:1/db?sslpassword={s}",
    "pgvector://me@127.0.0.1:1/db?Password2={s}",
    "pinecone://?api-key={s}",
    "pinecone://?api_key_env=X&x-api-token={s}",
    "turbopuffer://?base_url=http://127.0.0.1:1&api-key={s}",
    "chroma+http://127.0.0.1:1?api-key={s}",
    "chroma+memory://?token={s}",
    "milvus://127.0.0.1:1?api_key={s}",
    "local:///tmp/vp-secret-test?secret_key={s}",
    "lancedb:///tmp/vp-secret-test?api-key={s}",
    "pgvector://me@127.0.0.1:1/db?colour={s}",  # not credential-like, still never shown
])
def test_unknown_options_never_echo_a_value(url: str,
                                            debug_logs: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigError) as info:
        vectorport.connect(url.format(s=OPTION_SECRET))
    assert "unknown option" in str(info.value)
    _assert_clean(info.value, debug_logs, OPTION_SECRET)


@pytest.mark.parametrize("password", ["Xq9/Zk7", "Xq9?Zk7", "Xq9#Zk7", "Xq9/Zk7?v=1"])
@pytest.mark.parametrize("scheme", ["pgvector", "milvus", "chroma+http"])
def test_an_unencoded_password_is_refused_unseen(password: str, scheme: str) -> None:
    with pytest.raises(ConfigError) as info:
        vectorport.connect(f"{scheme}://me:{password}@db.example:5432/x")
    text = _rendered(info.value)
    assert "Xq9" not in text and "Zk7" not in text
    assert "percent-encode" in str(info.value)


def test_an_encoded_password_is_fine_and_hidden() -> None:
    url = vectorport.parse_url("pgvector://me:Xq9%2FZk7@db.example/x?sslpassword=abc")
    assert url.password is not None and url.password.reveal() == "Xq9/Zk7"
    assert "Xq9" not in repr(url) + str(url) and "abc" not in repr(url)
    assert "sslpassword" in url.secrets


def test_local_paths_may_hold_an_at_sign(tmp_path: Path) -> None:
    with vectorport.connect(f"local://{tmp_path}/me@home/db") as store:
        assert store.list_indexes() == []


# -- Chroma credentials are used, not dropped ----------------------------------------------


class _Recorder(ThreadingHTTPServer):
    authorizations: list[str]


@pytest.fixture
def auth_recorder() -> Iterator[_Recorder]:
    """An HTTP server that answers Chroma's heartbeat, records each request's
    ``Authorization`` and refuses everything else with 401."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            server: Any = self.server
            server.authorizations.append(self.headers.get("Authorization") or "")
            if self.path.endswith("/heartbeat"):
                self._send(200, {"nanosecond heartbeat": 1})
            else:
                self._send(401, {"error": "AuthError", "message": "Unauthorized"})

        do_POST = do_GET  # noqa: N815 - the name http.server looks up

        def _send(self, status: int, body: dict[str, Any]) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = _Recorder(("127.0.0.1", 0), Handler)
    server.authorizations = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_chroma_http_sends_basic_auth(auth_recorder: _Recorder,
                                      debug_logs: pytest.LogCaptureFixture) -> None:
    port = auth_recorder.server_address[1]
    with pytest.raises(VectorportError) as info:
        vectorport.connect(f"chroma+http://alice:{OPTION_SECRET}@127.0.0.1:{port}?timeout=5")
    expected = "Basic " + base64.b64encode(f"alice:{OPTION_SECRET}".encode()).decode()
    assert expected in auth_recorder.authorizations
    _assert_clean(info.value, debug_logs, OPTION_SECRET, expected.split()[1])


def test_chroma_http_sends_a_token(auth_recorder: _Recorder, monkeypatch: pytest.MonkeyPatch,
                                   debug_logs: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("VP_TEST_CHROMA_TOKEN", OPTION_SECRET)
    port = auth_recorder.server_address[1]
    with pytest.raises(VectorportError) as info:
        vectorport.connect(f"chroma+http://127.0.0.1:{port}?token_env=VP_TEST_CHROMA_TOKEN")
    assert f"Bearer {OPTION_SECRET}" in auth_recorder.authorizations
    _assert_clean(info.value, debug_logs, OPTION_SECRET)


@pytest.mark.parametrize("url", [
    "chroma+http://alice@127.0.0.1:1",  # a user without a password
    "chroma+http://alice:pw@127.0.0.1:1?token=t",  # both kinds at once
])
def test_chroma_credentials_that_cannot_be_used_are_refused(url: str) -> None:
    with pytest.raises(ConfigError):
        vectorport.connect(url)


def test_chroma_local_folders_take_no_credentials() -> None:
    folder = tempfile.mkdtemp(prefix="vp-chroma-secret-")
    try:
        with pytest.raises(ConfigError) as info:
            vectorport.connect(f"chroma://{folder}?token={OPTION_SECRET}")
        assert OPTION_SECRET not in _rendered(info.value)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
