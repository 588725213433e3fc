"""Comparing a stored record with the row it was written from, the same way in every
test that writes rows and reads them back (bulk loads, copies, imports)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vectorport.core.types import Record


def assert_same_record(have: Record, want: dict[str, Any]) -> None:
    """``have`` holds ``want``'s vector (within float32 rounding: Chroma gives some
    values back one unit in the last place away), its metadata with every kind kept
    (``1``, ``1.0`` and ``True`` apart), its document and its sparse vector."""
    label = want["id"]
    np.testing.assert_allclose(have.vector, np.asarray(want["vector"], np.float32),
                               rtol=2e-6, err_msg=label)
    meta = {k: list(v) if isinstance(v, tuple) else v for k, v in have.metadata.items()}
    assert meta == want["metadata"], label
    assert {k: type(v) for k, v in meta.items()} == {
        k: type(v) for k, v in want["metadata"].items()}, label
    assert have.document == want["document"], label
    if "sparse" in want:
        assert have.sparse is not None, label
        assert list(have.sparse.indices) == want["sparse"]["indices"], label
        np.testing.assert_allclose(have.sparse.values, want["sparse"]["values"], rtol=1e-6,
                                   err_msg=label)
