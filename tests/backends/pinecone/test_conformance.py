"""The conformance suite on Pinecone, through the official SDK over real HTTP.

Three bindings: the project's Pinecone emulator as is; the emulator with faults switched
on (a fifth of the requests answered 429/503, and writes visible only 0.2 s later); and
the real service, only when ``VECTORPORT_TEST_PINECONE_URL`` (a vectorport URL such as
``pinecone://?api_key_env=PINECONE_API_KEY``) and ``PINECONE_API_KEY`` are set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import ClassVar

import pytest

pytest.importorskip("pinecone")

from tests.support.deviations import inexact_number, string_range

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.core.filters.ast import Filter
from vectorport.core.retry import RetryPolicy
from vectorport.testing import url_from_env
from vectorport.testing.emulators import pinecone as emulator
from vectorport.testing.emulators.http import Faults

KEY_VARIABLE = "VECTORPORT_TEST_PINECONE_EMULATOR_KEY"

PINECONE_FILTER_DEVIATIONS = frozenset({
    # Pinecone's $gt/$gte/$lt/$lte compare numbers only: ranges over strings are refused.
    "gt_str",
    "lt_str_codepoint",
    "gte_list_str",
    "lt_mixed_str",
    # Pinecone compares numbers as float64: operands of magnitude >= 2^53 are refused.
    "eq_big_int",
    "gt_big_int",
})



class PineconeBinding(ConformanceSuite):
    known_filter_deviations: ClassVar[frozenset[str]] = PINECONE_FILTER_DEVIATIONS

    def filter_deviation(self, node: Filter) -> bool:
        """The shapes the adapter refuses (see the adapter's filters module), stated
        independently of its code: ranges over strings, numbers of magnitude >= 2^53."""
        return string_range(node) or inexact_number(node)


def emulator_store(
    faults: Faults | None = None, retry: RetryPolicy | None = None
) -> Iterator[vectorport.Store]:
    with emulator.running(faults=faults) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_VARIABLE, "emulator-key")
        url = f"pinecone://?api_key_env={KEY_VARIABLE}&host={server.url}"
        with vectorport.connect(url, retry=retry) as store:
            yield store


class TestPineconeEmulator(PineconeBinding):
    matrix_label = "pinecone (emulator)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from emulator_store()


class TestPineconeEmulatorWithFaults(PineconeBinding):
    """20% of requests fail with 429/503, and writes become visible 0.2 s late.

    Every differential example waits for its writes and its namespace delete to become
    visible (2 x 0.2 s), so this binding draws fewer of them than the plain one.

    Once the SDK's retry budget is spent (it stops retrying while failures outnumber
    successes), an operation fails its facade's default 6 attempts in a row about once
    in 15,000 (0.2^6); across the ~2,000 operations of this class that would fail one run
    in ten, so this binding allows 12 attempts, with the same backoff."""
    matrix_label = "pinecone (emulator, 20% faults + lag)"

    differential_examples: ClassVar[int] = 60

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from emulator_store(Faults(error_rate=0.2, lag_seconds=0.2, seed=20240617),
                                  RetryPolicy(attempts=12))


@pytest.mark.skipif(
    not (url_from_env("pinecone") and os.environ.get("PINECONE_API_KEY")),
    reason="set VECTORPORT_TEST_PINECONE_URL and PINECONE_API_KEY to run against Pinecone",
)
class TestPineconeService(PineconeBinding):
    matrix_label = "pinecone (service)"
    differential_examples: ClassVar[int] = 30

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        url = url_from_env("pinecone")
        assert url is not None
        with vectorport.connect(url) as store:
            yield store
