"""A pytest plugin for the fidelity runner: deselects the out-of-scope vendor tests.

Loaded with ``-p`` by :mod:`vectorport.testing.emulators.fidelity`, which names the
vendor and the list in environment variables; a deselected test is reported with its
reason so the summary says what was left out and why.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest

from vectorport.testing.emulators.fidelity import load_suite


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    vendor = os.environ.get("VECTORPORT_FIDELITY_VENDOR")
    listing = os.environ.get("VECTORPORT_FIDELITY_OUT_OF_SCOPE")
    if not vendor or not listing:
        return
    suite = load_suite(vendor, Path(listing))
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        # Tests that other tests depend on (they create the namespace) still run, as
        # strict expected failures: they must fail, on the refused feature only.
        expected = next((r for p, r in suite.expected_failures
                         if fnmatch.fnmatchcase(item.nodeid, p)), None)
        if expected is not None:
            item.add_marker(pytest.mark.xfail(reason=expected, strict=True))
        reason = next((r for p, r in suite.out_of_scope
                       if fnmatch.fnmatchcase(item.nodeid, p)), None)
        (kept if reason is None else dropped).append(item)
        if reason is not None:
            print(f"out of scope: {item.nodeid}: {reason}")
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
