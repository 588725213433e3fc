"""The conformance suite, shipped so that third-party adapter authors run it too.

See :mod:`vectorport.conformance.suite` for how to bind it to a backend.
"""

# The suite is pytest test classes with hypothesis strategies: say which extra brings them,
# instead of a ModuleNotFoundError from deep inside (``vectorport matrix`` imports this too).
from vectorport.extras import require_testing

require_testing("the conformance suite (vectorport.conformance)")

from vectorport.conformance.dataset import FILTER_CASES, HOSTILE_FIELD_NAMES, HOSTILE_STRINGS
from vectorport.conformance.precision import PrecisionTests
from vectorport.conformance.protocols import NavigableConformance, PatchableConformance
from vectorport.conformance.reference import reference_query
from vectorport.conformance.scanning import ScanTests
from vectorport.conformance.suite import (
    ConformanceSuite,
    CrudTests,
    FilterTests,
    LifecycleTests,
    NamespaceTests,
    OptionTests,
    ScoreTests,
    SparseTests,
    ValidationTests,
)

__all__ = [
    "FILTER_CASES",
    "HOSTILE_FIELD_NAMES",
    "HOSTILE_STRINGS",
    "ConformanceSuite",
    "CrudTests",
    "FilterTests",
    "LifecycleTests",
    "NamespaceTests",
    "NavigableConformance",
    "OptionTests",
    "PatchableConformance",
    "PrecisionTests",
    "ScanTests",
    "ScoreTests",
    "SparseTests",
    "ValidationTests",
    "reference_query",
]
