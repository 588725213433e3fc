"""vectorport's conformance suite on the example adapter: this is all a binding takes."""

from collections.abc import Iterator

import pytest

import vectorport
from vectorport.conformance import ConformanceSuite


class TestDictStore(ConformanceSuite):
    matrix_label = "dictstore (example plugin)"

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[vectorport.Store]:
        with vectorport.connect("dictstore://") as store:
            yield store


def test_found_through_the_entry_point() -> None:
    entry = vectorport.default_registry().entries["dictstore"]
    assert entry.plugin == "dictstore"
