"""The conformance suite on the reference adapter, in memory and durable on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite


class TestLocalMemory(ConformanceSuite):
    matrix_label = "local (memory)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.connect("memory://") as store:
            yield store


class TestLocalDurable(ConformanceSuite):
    matrix_label = "local (SQLite)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[vectorport.Store]:
        path: Path = tmp_path_factory.mktemp("local") / "store.db"
        with vectorport.connect(f"local://{path}") as store:
            yield store
