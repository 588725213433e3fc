"""The chunk protocols (navigation, patching) over turbopuffer, against the emulator.

turbopuffer's ``patch_rows`` cannot replace vector attributes, so vector patches must
raise ``UnsupportedFeatureError`` and write nothing (``expect_vector_patch = False``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import ClassVar

import pytest

import vectorport
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.testing.emulators.turbopuffer import DEFAULT_API_KEY, running

pytest.importorskip("turbopuffer")

KEY_ENV = "VECTORPORT_TEST_TURBOPUFFER_PROTOCOLS_KEY"


class TestTurbopufferProtocols(NavigableConformance, PatchableConformance):
    expect_vector_patch: ClassVar[bool] = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        os.environ[KEY_ENV] = DEFAULT_API_KEY
        with running() as server, vectorport.connect(
            f"turbopuffer://?base_url={server.url}&api_key_env={KEY_ENV}"
        ) as store:
            yield store
