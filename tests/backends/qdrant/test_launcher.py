"""The Qdrant server launcher (:mod:`vectorport.testing.qdrant`), with stand-in
executables: no Qdrant binary is needed to check how it is started, awaited and
cleaned up."""

from __future__ import annotations

import stat
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from vectorport.testing import qdrant as launcher

STAND_IN = f"""#!{sys.executable}
import http.server, os, pathlib
pathlib.Path(os.environ["QDRANT__STORAGE__STORAGE_PATH"]).mkdir(parents=True)
class Ready(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/readyz" else 404)
        self.end_headers()
        self.wfile.write(os.environ["QDRANT__SERVICE__HOST"].encode())
    def log_message(self, *args):
        pass
http.server.HTTPServer((os.environ["QDRANT__SERVICE__HOST"],
                        int(os.environ["QDRANT__SERVICE__HTTP_PORT"])), Ready).serve_forever()
"""


def _executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_started_binary_is_awaited_reached_and_cleaned_up(tmp_path: Path) -> None:
    binary = _executable(tmp_path / "qdrant", STAND_IN)
    with launcher.running_binary(binary) as url:
        assert url.startswith("qdrant://127.0.0.1:")
        port = url.rsplit(":", 1)[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            assert answer.read() == b"127.0.0.1"  # bound to loopback only
        folders = [p for p in Path(tempfile.gettempdir()).glob("vp-qdrant-*")
                   if (p / "storage").is_dir()]
        assert folders
    assert not any(p.exists() for p in folders)


def test_a_binary_that_exits_is_reported(tmp_path: Path) -> None:
    binary = _executable(tmp_path / "qdrant", "#!/bin/sh\necho 'bad config' >&2\nexit 3\n")
    with pytest.raises(RuntimeError, match="bad config"), launcher.running_binary(binary):
        pass


def test_server_url_prefers_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VECTORPORT_TEST_QDRANT_URL", "qdrant://example:6333")
    with launcher.server_url() as url:
        assert url == "qdrant://example:6333"
    monkeypatch.delenv("VECTORPORT_TEST_QDRANT_URL")
    monkeypatch.setenv("QDRANT_BINARY", "")
    monkeypatch.setenv("PATH", "")
    with launcher.server_url() as url:
        assert url is None
