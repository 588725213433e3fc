"""The chunk protocols (navigation, patching) over Pinecone, against the emulator.

Pinecone's update cannot remove metadata keys, so the adapter offers no native patch:
the generic chunk layer patches by read-modify-write (``expect_patchable = False``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

pytest.importorskip("pinecone")

import vectorport
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.testing.emulators import pinecone as emulator

KEY_VARIABLE = "VECTORPORT_TEST_PINECONE_PROTOCOLS_KEY"


class TestPineconeProtocols(NavigableConformance, PatchableConformance):
    expect_patchable: ClassVar[bool] = False

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with emulator.running() as server, pytest.MonkeyPatch.context() as patch:
            patch.setenv(KEY_VARIABLE, "emulator-key")
            with vectorport.connect(
                f"pinecone://?api_key_env={KEY_VARIABLE}&host={server.url}"
            ) as store:
                yield store
