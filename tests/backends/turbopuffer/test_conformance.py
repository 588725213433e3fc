"""The conformance suite on turbopuffer, through the official SDK.

Three bindings: the emulator as is; the emulator misbehaving (about 20% of requests
answered 429 or 503, and writes reaching eventually consistent reads 0.2 s late); and
the real service, only when ``VECTORPORT_TEST_TURBOPUFFER_URL`` (a ``turbopuffer://`` URL
such as ``turbopuffer://?region=gcp-us-central1``, or an ``https://`` endpoint) and
``TURBOPUFFER_API_KEY`` are set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite
from vectorport.testing import url_from_env
from vectorport.testing.emulators.http import Faults
from vectorport.testing.emulators.turbopuffer import DEFAULT_API_KEY, running

pytest.importorskip("turbopuffer")

KEY_ENV = "VECTORPORT_TEST_TURBOPUFFER_EMULATOR_KEY"


def emulator_store(faults: Faults | None = None) -> Iterator[vectorport.Store]:
    os.environ[KEY_ENV] = DEFAULT_API_KEY
    with running(faults=faults) as server, vectorport.connect(
        f"turbopuffer://?base_url={server.url}&api_key_env={KEY_ENV}"
    ) as store:
        yield store


class TestTurbopufferEmulator(ConformanceSuite):
    matrix_label = "turbopuffer (emulator)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from emulator_store()


class TestTurbopufferEmulatorWithFaults(ConformanceSuite):
    matrix_label = "turbopuffer (emulator, 20% faults + lag)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        yield from emulator_store(Faults(error_rate=0.2, lag_seconds=0.2, seed=7))


def service_url() -> str | None:
    """``VECTORPORT_TEST_TURBOPUFFER_URL`` as a store URL: a ``turbopuffer://`` URL, or an
    ``http(s)://`` endpoint (a region's URL, or a running ``vectorport emulator``). Test
    data goes under the ``vptest.`` prefix unless the URL names one."""
    raw = url_from_env("turbopuffer")
    if raw is None:
        return None
    url = raw if raw.startswith("turbopuffer://") else f"turbopuffer://?base_url={raw}"
    if "prefix=" not in url:
        url += ("&" if "?" in url else "?") + "prefix=vptest."
    return url


REAL_URL = service_url()


@pytest.mark.backend("turbopuffer")
@pytest.mark.skipif(
    not (REAL_URL and os.environ.get("TURBOPUFFER_API_KEY")),
    reason="set VECTORPORT_TEST_TURBOPUFFER_URL and TURBOPUFFER_API_KEY to run against turbopuffer",
)
class TestTurbopufferService(ConformanceSuite):
    matrix_label = "turbopuffer (service)"
    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        assert REAL_URL is not None
        with vectorport.connect(REAL_URL) as store:
            yield store
