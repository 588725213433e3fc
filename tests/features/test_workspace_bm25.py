"""BM25 scores against a small corpus checked by hand, and search index names.

The corpus has no stopwords, so the tokens are the words::

    d1 "cat cat dog"          |d1| = 3
    d2 "cat bird"             |d2| = 2
    d3 "fish bird bird bird"  |d3| = 4
    d4 "dog fish"             |d4| = 2        N = 4, avgdl = 11/4 = 2.75

Query "cat bird", k1 = 1.2, b = 0.75. df(cat) = df(bird) = 2, so both idf are
ln(1 + (4 − 2 + 0.5)/(2 + 0.5)) = ln 2 = 0.693147.

    d1: cat tf 2, K = 1.2·(0.25 + 0.75·3/2.75) = 1.281818
        ln2 · 2·2.2/(2 + 1.281818)            = 0.693147 · 1.340720 = 0.929316
    d2: cat and bird tf 1, K = 1.2·(0.25 + 0.75·2/2.75) = 0.954545
        2 · ln2 · 2.2/(1 + 0.954545)          = 2 · 0.693147 · 1.125581 = 1.560387
    d3: bird tf 3, K = 1.2·(0.25 + 0.75·4/2.75) = 1.609091
        ln2 · 3·2.2/(3 + 1.609091)            = 0.693147 · 1.431953 = 0.992554
    d4: no query term, no score.

Normalised to the best hit (d2): 1, d3 0.636095, d1 0.595568.
"""

from __future__ import annotations

import math

import pytest

from vectorport.core.errors import ValidationError
from vectorport.core.scoring import sparse_dot
from vectorport.embedders import BM25Encoder
from vectorport.workspace import BM25Index, Workspace, bm25_settings, check_search_index_name
from vectorport.workspace.naming import normalize_path, store_index_name

CORPUS = {"d1": "cat cat dog", "d2": "cat bird", "d3": "fish bird bird bird", "d4": "dog fish"}
HAND = {"d1": 0.929316, "d2": 1.560387, "d3": 0.992554}


def formula(tf: int, dl: int, df: int, n: int, avgdl: float, k1: float = 1.2, b: float = 0.75) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def corpus_index(**options: float) -> BM25Index:
    index = BM25Index(**options)
    for key, text in CORPUS.items():
        index.add(key, text)
    return index


def test_scores_match_the_hand_computation() -> None:
    scores = corpus_index().scores("cat bird")
    assert set(scores) == {"d1", "d2", "d3"}
    for key, expected in HAND.items():
        assert scores[key] == pytest.approx(expected, abs=1e-6)


def test_scores_follow_the_formula() -> None:
    n, avgdl = 4, 11 / 4
    scores = corpus_index().scores("cat bird")
    assert scores["d1"] == pytest.approx(formula(2, 3, 2, n, avgdl))
    assert scores["d2"] == pytest.approx(formula(1, 2, 2, n, avgdl) * 2)
    assert scores["d3"] == pytest.approx(formula(3, 4, 2, n, avgdl))


def test_custom_k1_and_b() -> None:
    k1, b = bm25_settings({"k1": 1.5, "b": 0.5})
    scores = corpus_index(k1=k1, b=b).scores("fish")
    n, avgdl = 4, 11 / 4
    assert scores["d3"] == pytest.approx(formula(1, 4, 2, n, avgdl, 1.5, 0.5))
    assert scores["d4"] == pytest.approx(formula(1, 2, 2, n, avgdl, 1.5, 0.5))
    assert scores["d4"] > scores["d3"]  # the shorter document wins
    assert corpus_index(k1=1.5, b=0.0).scores("fish")["d3"] == pytest.approx(
        corpus_index(k1=1.5, b=0.0).scores("fish")["d4"])  # b = 0: no length normalisation


def test_repeated_query_terms_count() -> None:
    index = corpus_index()
    assert index.scores("dog dog")["d4"] == pytest.approx(2 * index.scores("dog")["d4"])


def test_statistics_follow_additions_and_removals() -> None:
    index = corpus_index()
    index.remove("d4")
    index.add("d2", "cat bird bird")  # replace
    n, avgdl = 3, (3 + 3 + 4) / 3
    scores = index.scores("dog bird")
    assert scores["d1"] == pytest.approx(formula(1, 3, 1, n, avgdl))
    assert scores["d2"] == pytest.approx(formula(2, 3, 2, n, avgdl))
    assert len(index) == 3 and "d4" not in index and index.scores("fish") == {
        "d3": pytest.approx(formula(1, 4, 1, n, avgdl))}


def test_agrees_with_the_sparse_bm25_encoder() -> None:
    texts = ["the quick brown fox", "a lazy dog sleeps", "quick quick dog", "brown bread and jam"]
    index = BM25Index()
    for n, text in enumerate(texts):
        index.add(str(n), text)
    encoder = BM25Encoder().fit(texts)
    for query in ("quick dog", "brown", "jam fox quick"):
        q = encoder.encode_query(query, normalize=False)
        assert q is not None
        expected = {str(n): sparse_dot(q, encoder.encode_document(t)) for n, t in enumerate(texts)}
        got = index.scores(query)
        assert got == pytest.approx({k: v for k, v in expected.items() if v > 0})


def test_workspace_normalises_to_the_best_hit() -> None:
    ws = Workspace(bm25=True)
    for key, text in CORPUS.items():
        ws.index(f"/{key}.txt", text)
    results = ws.search("cat bird", top_k=10)
    assert [r.id for r in results] == ["/d2.txt", "/d3.txt", "/d1.txt"]
    best = HAND["d2"]
    assert [r.score for r in results] == pytest.approx(
        [1.0, HAND["d3"] / best, HAND["d1"] / best], abs=1e-6)
    assert [round(r.score, 6) for r in results] == [1.0, 0.636095, 0.595568]
    assert all(r.score_details is None for r in results)


@pytest.mark.parametrize("value", [{"k1": -1}, {"b": 2}, {"k": 1}, "yes", 3])
def test_bad_bm25_settings(value: object) -> None:
    with pytest.raises(ValidationError):
        bm25_settings(value)  # type: ignore[arg-type]


# -- names ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["my_workspace_vectors", "_private", "A", "x" * 63, "Docs2024"])
def test_valid_search_index_names(name: str) -> None:
    assert check_search_index_name(name) == name
    mapped = store_index_name(name)
    assert len(mapped) <= 45 and mapped == mapped.lower() and mapped[0].isalpha()


@pytest.mark.parametrize("name", ["", "1abc", "my-index", "has space", "x" * 64, "ünï", "a.b", 7])
def test_invalid_search_index_names(name: object) -> None:
    with pytest.raises(ValidationError, match="search index name"):
        check_search_index_name(name)
    with pytest.raises(ValidationError):
        Workspace(bm25=True, search_index_name=name)  # type: ignore[arg-type]


def test_index_name_mapping_is_identity_when_valid_and_distinct_otherwise() -> None:
    assert store_index_name("my_workspace_vectors") == "my_workspace_vectors"
    mapped = {store_index_name(n) for n in ("MyDocs", "mydocs", "MYDOCS", "_mydocs", "__mydocs")}
    assert len(mapped) == 5
    assert store_index_name("MyDocs").startswith("mydocs_")
    assert store_index_name("_x").startswith("x_")
    assert store_index_name("_1x").startswith("ws_1x_")


@pytest.mark.parametrize(("given", "canonical"), [
    ("docs/a.md", "/docs/a.md"), ("/docs/a.md", "/docs/a.md"), ("./docs//a.md", "/docs/a.md"),
    ("docs\\a.md", "/docs/a.md"),
])
def test_paths_are_canonical(given: str, canonical: str) -> None:
    assert normalize_path(given) == canonical


@pytest.mark.parametrize("bad", ["", "/", "../etc/passwd", "docs/../../x", "a\x00b", 3])
def test_bad_paths(bad: object) -> None:
    with pytest.raises(ValidationError):
        normalize_path(bad)
