"""Embedders: the protocol, function adapters with batching, the LRU cache, the offline
hashing embedder and the BM25 sparse encoder."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from vectorport import ConfigError, SparseVector, ValidationError
from vectorport.core import validation
from vectorport.core.scoring import sparse_dot
from vectorport.embedders import (
    AsyncEmbedder,
    BM25Encoder,
    CachedEmbedder,
    ConfigurableEmbedder,
    Embedder,
    FunctionEmbedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    aembed,
    as_embedder,
    default_embedder,
    embed_one,
    term_id,
)
from vectorport.embedders.hashing import words


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- the hashing embedder -------------------------------------------------------------------------


class TestHashingEmbedder:
    def test_shape_norm_and_protocol(self) -> None:
        e = HashingEmbedder(dimension=128)
        vectors = e.embed(["hello world", "another text", ""])
        assert isinstance(e, Embedder) and e.dimension == 128
        for v in vectors:
            assert v.shape == (128,) and v.dtype == np.float32
            assert math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-6)
            assert not v.flags.writeable
        assert default_embedder().dimension == 384

    def test_deterministic_across_instances_and_processes(self) -> None:
        text = "Deterministic embeddings, même en Unicode."
        here = HashingEmbedder(dimension=96).embed([text])[0]
        assert np.array_equal(here, HashingEmbedder(dimension=96).embed([text])[0])
        code = ("import json; from vectorport.embedders import HashingEmbedder; "
                f"print(json.dumps(HashingEmbedder(dimension=96).embed([{text!r}])[0].tolist()))")
        env = {**os.environ, "PYTHONHASHSEED": "12345"}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, check=True).stdout
        assert np.array_equal(np.asarray(json.loads(out), dtype=np.float32), here)

    def test_overlapping_texts_are_closer(self) -> None:
        e = HashingEmbedder()
        anchor, near, far = e.embed([
            "How do I create a new index?",
            "Creating indexes: call create_index with a name.",
            "The weather in Lisbon is sunny and warm.",
        ])
        assert cosine(anchor, near) > cosine(anchor, far) + 0.1
        same = e.embed(["How do I create a new index?"])[0]
        assert math.isclose(cosine(anchor, same), 1.0, abs_tol=1e-6)

    def test_case_and_unicode_normalization(self) -> None:
        e = HashingEmbedder()
        a, b = e.embed(["ＩＮＤＥＸ Ｓｔｏｒｅ", "index store"])  # full-width forms, NFKC
        assert np.allclose(a, b)

    def test_features_and_weights(self) -> None:
        e = HashingEmbedder(ngram_range=(3, 3), word_weight=1.0, char_weight=0.5)
        feats = e.features("ab ab")
        assert feats["w:ab"] == pytest.approx(1.0 + math.log(2))
        assert feats["c: ab"] == pytest.approx(0.5 * (1.0 + math.log(2)))
        assert set(HashingEmbedder(char_weight=0).features("index")) == {"w:index"}

    def test_empty_text_is_a_fixed_unit_vector(self) -> None:
        e = HashingEmbedder()
        a, b, c = e.embed(["", "!!!", "   "])
        assert np.array_equal(a, b) and np.array_equal(b, c)
        assert math.isclose(float(np.linalg.norm(a)), 1.0, abs_tol=1e-6)

    @pytest.mark.parametrize("kwargs", [
        {"dimension": 1}, {"dimension": True}, {"dimension": "64"}, {"ngram_range": (4, 2)},
        {"ngram_range": (0, 2)}, {"word_weight": -1}, {"word_weight": 0, "char_weight": 0},
    ])
    def test_bad_arguments(self, kwargs: dict[str, Any]) -> None:
        with pytest.raises(ValidationError):
            HashingEmbedder(**kwargs)

    def test_input_must_be_texts(self) -> None:
        e = HashingEmbedder()
        with pytest.raises(ValidationError, match="not a single str"):
            e.embed("one text")
        with pytest.raises(ValidationError, match="not a str"):
            e.embed(["ok", 3])  # type: ignore[list-item]
        assert e.embed([]) == []
        assert np.array_equal(embed_one(e, "x"), e.embed(["x"])[0])


# -- function embedders -----------------------------------------------------------------------------

BASE = HashingEmbedder(dimension=16)


def one(text: str) -> list[float]:
    return BASE.embed([text])[0].tolist()


class TestFunctionEmbedder:
    def test_single_text_function(self) -> None:
        calls: list[str] = []

        def fn(text: str) -> list[float]:
            calls.append(text)
            return one(text)

        e = FunctionEmbedder(fn, max_concurrency=1)
        texts = ["a", "b", "c"]
        out = e.embed(texts)
        assert calls == texts
        assert all(np.array_equal(v, BASE.embed([t])[0]) for v, t in zip(out, texts, strict=True))
        assert e.dimension == 16

    def test_batches_are_chunked_and_concurrent_and_keep_order(self) -> None:
        sizes: list[int] = []
        in_flight, peak = 0, 0
        lock = threading.Lock()

        def batch(texts: list[str]) -> list[list[float]]:
            nonlocal in_flight, peak
            with lock:
                sizes.append(len(texts))
                in_flight += 1
                peak = max(peak, in_flight)
            time.sleep(0.02 if texts[0] == "t0" else 0.001)  # the first chunk finishes last
            with lock:
                in_flight -= 1
            return [one(t) for t in texts]

        e = FunctionEmbedder(batch, batch=True, max_batch_size=3, max_concurrency=4)
        texts = [f"t{i}" for i in range(10)]
        out = e.embed(texts)
        assert sorted(sizes) == [1, 3, 3, 3]
        assert peak > 1
        assert [v.tolist() for v in out] == [BASE.embed([t])[0].tolist() for t in texts]

    def test_one_batch_without_a_limit(self) -> None:
        sizes: list[int] = []
        e = FunctionEmbedder(lambda ts: sizes.append(len(ts)) or [one(t) for t in ts],
                             batch=True)
        e.embed([f"t{i}" for i in range(7)])
        assert sizes == [7]

    def test_async_functions(self) -> None:
        in_flight, peak = 0, 0

        async def batch(texts: list[str]) -> list[list[float]]:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01 if texts[0] == "t0" else 0.0)
            in_flight -= 1
            return [one(t) for t in texts]

        e = FunctionEmbedder(batch, batch=True, max_batch_size=2, max_concurrency=3)
        texts = [f"t{i}" for i in range(7)]
        expected = [BASE.embed([t])[0].tolist() for t in texts]
        assert [v.tolist() for v in asyncio.run(e.aembed(texts))] == expected
        assert peak == 3
        assert [v.tolist() for v in e.embed(texts)] == expected  # sync call of an async fn

        async def single(text: str) -> list[float]:
            return one(text)

        assert [v.tolist() for v in FunctionEmbedder(single).embed(texts)] == expected

    def test_sync_function_from_async_code(self) -> None:
        e = FunctionEmbedder(one)
        out = asyncio.run(aembed(e, ["x", "y"]))
        assert [v.tolist() for v in out] == [one("x"), one("y")]
        assert isinstance(e, AsyncEmbedder)

    @pytest.mark.parametrize(("fn", "batch", "message"), [
        (lambda ts: [one(t) for t in ts][:-1], True, "returned 1 vectors for 2 texts"),
        (lambda ts: [[1.0, float("nan")], [1.0, 2.0]], True, "NaN"),
        (lambda ts: [[1.0, 2.0], [1.0, 2.0, 3.0]], True, "dimensions"),
        (lambda t: "not a vector", False, "not a"),
        (lambda t: [[1.0], [2.0]], False, "1-d"),
        (lambda t: [], False, "non-empty"),
        (lambda ts: None, True, "not a sequence"),
    ])
    def test_bad_outputs_are_loud(self, fn: Any, batch: bool, message: str) -> None:
        with pytest.raises(ValidationError, match=message):
            FunctionEmbedder(fn, batch=batch).embed(["a", "b"])

    def test_declared_dimension_is_checked(self) -> None:
        with pytest.raises(ValidationError, match="expected 8"):
            FunctionEmbedder(one, dimension=8).embed(["a"])

    def test_arguments(self) -> None:
        with pytest.raises(ValidationError, match="batch=True"):
            FunctionEmbedder(one, max_batch_size=4)
        with pytest.raises(ValidationError, match="max_concurrency"):
            FunctionEmbedder(one, max_concurrency=0)
        with pytest.raises(ValidationError, match="callable"):
            FunctionEmbedder("nope")  # type: ignore[arg-type]

    def test_as_embedder(self) -> None:
        e = HashingEmbedder()
        assert as_embedder(e) is e
        wrapped = as_embedder(one)
        assert isinstance(wrapped, FunctionEmbedder)
        assert isinstance(as_embedder(lambda ts: [one(t) for t in ts], batch=True,
                                      max_batch_size=2), FunctionEmbedder)
        with pytest.raises(ValidationError, match="not an embedder"):
            as_embedder(42)


# -- the cache ------------------------------------------------------------------------------------------


class Counting:
    """A user-defined embedder that counts what it is asked."""

    dimension = 16

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[Any]:
        self.asked.append(list(texts))
        return BASE.embed(texts)


class TestCachedEmbedder:
    def test_hits_misses_and_dedup(self) -> None:
        inner = Counting()
        cache = CachedEmbedder(inner, maxsize=10)
        first = cache.embed(["a", "b", "a"])
        assert inner.asked == [["a", "b"]]
        second = cache.embed(["b", "c", "a"])
        assert inner.asked == [["a", "b"], ["c"]]
        assert np.array_equal(first[0], second[2]) and np.array_equal(first[1], second[0])
        info = cache.cache_info()
        assert (info.hits, info.misses, info.size, info.maxsize) == (3, 3, 3, 10)
        assert all(not v.flags.writeable for v in second)
        assert cache.dimension == 16

    def test_lru_eviction(self) -> None:
        inner = Counting()
        cache = CachedEmbedder(inner, maxsize=2)
        cache.embed(["a"])
        cache.embed(["b"])
        cache.embed(["a"])  # a is now the most recent
        cache.embed(["c"])  # evicts b
        inner.asked.clear()
        cache.embed(["a", "b"])
        assert inner.asked == [["b"]]
        cache.cache_clear()
        assert cache.cache_info().size == 0

    def test_async(self) -> None:
        inner = Counting()
        cache = CachedEmbedder(inner)
        asyncio.run(cache.aembed(["x", "y"]))
        asyncio.run(cache.aembed(["y", "z"]))
        assert inner.asked == [["x", "y"], ["z"]]

    def test_options_get_their_own_entries(self) -> None:
        class Configurable(Counting):
            def __init__(self, scale: float = 1.0, asked: list[list[str]] | None = None) -> None:
                super().__init__()
                self.scale = scale
                if asked is not None:
                    self.asked = asked

            def embed(self, texts: Sequence[str]) -> list[Any]:
                self.asked.append(list(texts))
                return [v * self.scale for v in BASE.embed(texts)]

            def with_options(self, options: Any) -> Configurable:
                return Configurable(options.get("me", {}).get("scale", 1.0), self.asked)

        inner = Configurable()
        cache = CachedEmbedder(inner)
        assert isinstance(cache, ConfigurableEmbedder)
        plain = cache.embed(["a"])[0]
        doubled = cache.with_options({"me": {"scale": 2.0}})
        assert np.allclose(doubled.embed(["a"])[0], 2 * plain)
        assert np.allclose(doubled.embed(["a"])[0], 2 * plain)  # cached under its options
        assert inner.asked == [["a"], ["a"]]
        assert np.allclose(cache.embed(["a"])[0], plain)

    def test_options_need_a_configurable_model(self) -> None:
        with pytest.raises(ConfigError, match="provider_options"):
            CachedEmbedder(Counting()).with_options({"x": {}})

    def test_maxsize(self) -> None:
        with pytest.raises(ValidationError):
            CachedEmbedder(Counting(), maxsize=0)


# -- BM25 ----------------------------------------------------------------------------------------------

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A quick index: create it with create_index.",
    "Vector databases store embeddings; sparse vectors store term weights.",
    "The fox and the dog are friends.",
    "Index index index: repeated terms saturate in BM25.",
]


def reference_bm25(query: str, doc: str, corpus: list[str], k1: float = 1.2,
                   b: float = 0.75) -> float:
    """Okapi BM25 from its definition, on term strings (no hashing, no sparse vectors)."""
    enc = BM25Encoder(k1, b)
    docs = [enc.tokenize(d) for d in corpus]
    avgdl = sum(map(len, docs)) / len(docs)
    tokens = enc.tokenize(doc)
    tf = Counter(tokens)
    score = 0.0
    for term in enc.tokenize(query):
        df = sum(term in d for d in docs)
        if df == 0 or term not in tf:
            continue
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(tokens) / avgdl))
    return score


class TestBM25:
    @pytest.mark.parametrize("query", ["quick fox", "index index", "sparse vectors store",
                                       "dog", "nothing matches here"])
    def test_dot_product_is_the_bm25_score(self, query: str) -> None:
        enc = BM25Encoder().fit(CORPUS)
        q = enc.encode_query(query, normalize=False)
        for doc in CORPUS:
            d = enc.encode_document(doc)
            got = sparse_dot(q, d) if q is not None else 0.0
            assert got == pytest.approx(reference_bm25(query, doc, CORPUS), abs=1e-9)

    def test_normalized_query_keeps_the_ranking(self) -> None:
        enc = BM25Encoder().fit(CORPUS)
        raw = enc.encode_query("quick fox index", normalize=False)
        norm = enc.encode_query("quick fox index")
        assert raw is not None and norm is not None
        assert sum(norm.values) == pytest.approx(1.0)
        docs = enc.encode_documents(CORPUS)
        rank = lambda q: sorted(range(len(CORPUS)), key=lambda i: -sparse_dot(q, docs[i]))  # noqa: E731
        assert rank(raw) == rank(norm)

    def test_vectors_are_canonical_sparse_vectors(self) -> None:
        enc = BM25Encoder().fit(CORPUS)
        for vec in [*enc.encode_documents(CORPUS), enc.encode_query("quick fox")]:
            assert isinstance(vec, SparseVector)
            canonical = validation.sparse_vector(vec)
            assert canonical.indices == vec.indices  # sorted, unique, int32
            # BM25's own weights in float64 (its sums are tested above); stored, as
            # every sparse value, as float32
            assert canonical.values == tuple(float(np.float32(v)) for v in vec.values)
            assert all(0 <= i < 2**29 for i in vec.indices)  # below pgvector's 10^9 limit

    def test_term_ids_are_stable(self) -> None:
        for term in ["fox", "index", "ünïcode", ""]:
            digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
            assert term_id(term) == int.from_bytes(digest, "little") % 2**29
            assert term_id(term, 31) == int.from_bytes(digest, "little") % 2**31
        enc = BM25Encoder().fit(CORPUS)
        vec = enc.encode_query("fox", normalize=False)
        assert vec is not None and vec.indices == (term_id("fox"),)
        wide = BM25Encoder(id_bits=31).fit(CORPUS).encode_query("fox")
        assert wide is not None and wide.indices == (term_id("fox", 31),)
        with pytest.raises(ValidationError, match="id_bits"):
            BM25Encoder(id_bits=32)

    def test_empty_and_unknown(self) -> None:
        enc = BM25Encoder().fit(CORPUS)
        assert enc.encode_query("zebra unicorn") is None
        assert enc.encode_query("the of and") is None  # only stopwords
        assert enc.encode_document("") is None
        assert enc.encode_document("!!!") is None

    def test_must_be_fitted(self) -> None:
        enc = BM25Encoder()
        with pytest.raises(ValidationError, match="fit"):
            enc.encode_query("x")
        with pytest.raises(ValidationError, match="fit"):
            enc.encode_document("x")
        with pytest.raises(ValidationError, match="at least one"):
            enc.fit([])

    def test_round_trip(self) -> None:
        enc = BM25Encoder(k1=1.5, b=0.5, id_bits=20).fit(CORPUS)
        again = BM25Encoder.from_dict(json.loads(json.dumps(enc.to_dict())))
        assert again.encode_query("quick fox") == enc.encode_query("quick fox")
        assert again.encode_documents(CORPUS) == enc.encode_documents(CORPUS)
        with pytest.raises(ValidationError, match="not a saved"):
            BM25Encoder.from_dict({"k1": 1})

    def test_custom_tokenizer_and_parameters(self) -> None:
        enc = BM25Encoder(tokenizer=str.split, stopwords=()).fit(["a b", "b c"])
        assert enc.tokenize("The a") == ["The", "a"]
        assert enc.idf("b") < enc.idf("a")
        with pytest.raises(ValidationError):
            BM25Encoder(b=1.5)
        with pytest.raises(ValidationError):
            BM25Encoder(k1=-1)

    def test_words(self) -> None:
        assert words("Hello, Wörld! n°3") == ["hello", "wörld", "n", "3"]


# -- sentence-transformers (not installed here: the wrapper with a stand-in model) --------------------


class TestSentenceTransformers:
    def test_needs_the_extra(self) -> None:
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            with pytest.raises(ConfigError, match=r"vectorport\[sentence-transformers\]"):
                SentenceTransformerEmbedder("all-MiniLM-L6-v2")
        else:  # pragma: no cover - only where the extra is installed
            pytest.skip("sentence-transformers is installed")

    def test_wraps_a_loaded_model(self) -> None:
        class Model:  # the sentence-transformers SentenceTransformer interface
            def __init__(self) -> None:
                self.inputs: list[str] = []

            def get_sentence_embedding_dimension(self) -> int:
                return 16

            def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
                self.inputs.extend(texts)
                assert kwargs["normalize_embeddings"] is True
                return np.stack(BASE.embed(texts))

        model = Model()
        e = SentenceTransformerEmbedder(model=model, prompt="query: ")
        out = e.embed(["a", "b"])
        assert e.dimension == 16 and len(out) == 2
        assert model.inputs == ["query: a", "query: b"]
        assert e.embed([]) == []
        with pytest.raises(ConfigError, match="exactly one"):
            SentenceTransformerEmbedder()
