"""Chroma's remembered collection handles (the hot paths skip the lookup) never serve a
collection that is gone: another client dropping and re-creating the index is seen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("chromadb")

import vectorport


def test_a_stale_handle_is_looked_up_afresh(tmp_path: Path) -> None:
    url = f"chroma://{tmp_path}"
    v = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        index = first.create_index("handles", 4, "cosine")
        index.upsert([("old", v, {"n": 1})])
        assert [m.id for m in index.query(v, top_k=5)] == ["old"]  # handle remembered

        second.delete_index("handles")
        again = second.create_index("handles", 4, "cosine")
        again.upsert([("new", v, {"n": 2})])

        assert [m.id for m in index.query(v, top_k=5)] == ["new"]
        index.upsert([("more", v * 2, {"n": 3})])  # into the re-created collection
        assert sorted(again.fetch(["old", "new", "more"])) == ["more", "new"]

        second.delete_index("handles")
        with pytest.raises(vectorport.IndexNotFoundError):
            index.query(v, top_k=5)
