"""The reranker: weights, the combined score, determinism, and the scorers."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Sequence

import pytest

from vectorport import ConfigError, ValidationError
from vectorport.agent import (
    CrossEncoderScorer,
    LLMScorer,
    Reranker,
    RerankWeights,
    TermOverlapScorer,
    rerank,
)
from vectorport.core.types import Match


def matches(*scores: float, ids: Sequence[str] | None = None) -> list[Match]:
    names = ids or [f"d{i}" for i in range(len(scores))]
    return [Match(id=n, score=s, document=f"text of {n}") for n, s in zip(names, scores,
                                                                         strict=True)]


def by_text(table: dict[str, float]):  # type: ignore[no-untyped-def]
    return lambda query, text: table[text.removeprefix("text of ")]


class TestWeights:
    def test_defaults(self) -> None:
        w = RerankWeights()
        assert (w.semantic, w.vector, w.position) == (0.4, 0.4, 0.2)

    @pytest.mark.parametrize("value", [
        {"semantic": 0.5, "vector": 0.3, "position": 0.2},
        {"semantic": 1 / 3, "vector": 1 / 3, "position": 1 / 3},
        {"semantic": 0.5, "vector": 0.3, "position": 0.2 + 5e-7},
        {"semantic": 1.0, "vector": 0, "position": 0},
        {"vector": 0.6, "position": 0.0},  # semantic keeps its default 0.4
    ])
    def test_valid(self, value: dict[str, float]) -> None:
        RerankWeights.from_value(value)

    @pytest.mark.parametrize(("value", "message"), [
        ({"semantic": 0.5, "vector": 0.5}, "sum to 1"),  # + default position 0.2
        ({"semantic": 0.5, "vector": 0.3, "position": 0.2 + 2e-6}, "sum to 1"),
        ({"semantic": 1.2, "vector": -0.2, "position": 0.0}, "in [0, 1]"),
        ({"semantic": float("nan"), "vector": 0.5, "position": 0.5}, "in [0, 1]"),
        ({"semantic": True, "vector": 0, "position": 0}, "in [0, 1]"),
        ({"semantic": 0.4, "vector": 0.4, "position": 0.2, "query": 0.1}, "unknown"),
        ([0.4, 0.4, 0.2], "mapping"),
    ])
    def test_invalid(self, value: object, message: str) -> None:
        with pytest.raises(ValidationError, match=re.escape(message)):
            RerankWeights.from_value(value)  # type: ignore[arg-type]


class TestCombinedScore:
    def test_formula(self) -> None:
        found = matches(0.9, 0.7, 0.5, 0.3)
        semantic = {"d0": 0.1, "d1": 0.9, "d2": 0.5, "d3": 1.0}
        w = {"semantic": 0.5, "vector": 0.3, "position": 0.2}
        out = rerank("q", found, by_text(semantic), weights=w)
        n = len(found)
        want = {m.id: 0.5 * semantic[m.id] + 0.3 * m.score + 0.2 * (1 - i / n)
                for i, m in enumerate(found)}
        assert [r.match.id for r in out] == sorted(want, key=lambda k: (-want[k], k))
        for r in out:
            assert r.rerank.total == pytest.approx(want[r.match.id], abs=1e-12)
            assert r.rerank.position == pytest.approx(1 - r.original_rank / n)
            assert r.rerank.semantic == semantic[r.match.id]

    def test_position_is_one_minus_i_over_n(self) -> None:
        out = rerank("q", matches(0.5, 0.5, 0.5, 0.5, 0.5), None,
                     weights={"semantic": 0, "vector": 0, "position": 1})
        assert [r.rerank.position for r in out] == pytest.approx([1.0, 0.8, 0.6, 0.4, 0.2])
        assert [r.match.id for r in out] == ["d0", "d1", "d2", "d3", "d4"]

    def test_ties_break_by_id(self) -> None:
        found = matches(0.5, 0.5, 0.5, ids=["c", "a", "b"])
        out = rerank("q", found, lambda q, t: 0.5,
                     weights={"semantic": 0.5, "vector": 0.5, "position": 0.0})
        assert [r.match.id for r in out] == ["a", "b", "c"]

    def test_top_k(self) -> None:
        out = rerank("q", matches(0.9, 0.8, 0.7), lambda q, t: 0.0, top_k=2)
        assert [r.match.id for r in out] == ["d0", "d1"]
        with pytest.raises(ValidationError, match="top_k"):
            rerank("q", matches(0.9), lambda q, t: 0.0, top_k=0)

    def test_vector_scores_are_clipped_or_rescaled(self) -> None:
        found = matches(2.0, -0.5, 0.5)
        w = {"semantic": 0, "vector": 1, "position": 0}
        clipped = rerank("q", found, None, weights=w)
        assert {r.match.id: r.rerank.vector for r in clipped} == {"d0": 1.0, "d1": 0.0,
                                                                  "d2": 0.5}
        scaled = rerank("q", found, None, weights=w, vector_normalization="minmax")
        assert {r.match.id: r.rerank.vector for r in scaled} == {"d0": 1.0, "d1": 0.0,
                                                                 "d2": 0.4}
        same = rerank("q", matches(3.0, 3.0), None, weights=w, vector_normalization="minmax")
        assert [r.rerank.vector for r in same] == [1.0, 1.0]

    def test_no_scorer_call_without_semantic_weight(self) -> None:
        def boom(query: str, text: str) -> float:
            raise AssertionError("called")

        out = rerank("q", matches(0.1, 0.9), boom,
                     weights={"semantic": 0, "vector": 0.5, "position": 0.5})
        assert [r.match.id for r in out] == ["d1", "d0"]

    def test_semantic_weight_needs_a_scorer(self) -> None:
        with pytest.raises(ValidationError, match="needs a scorer"):
            rerank("q", matches(0.1), None)
        with pytest.raises(ValidationError, match="needs a scorer"):
            Reranker()

    @pytest.mark.parametrize("bad", [1.5, -0.1, float("nan"), "0.5", None, True])
    def test_scorer_output_must_be_in_range(self, bad: object) -> None:
        with pytest.raises(ValidationError, match=r"in \[0, 1\]"):
            rerank("q", matches(0.1, 0.2), lambda q, t: bad)  # type: ignore[arg-type,return-value]

    def test_empty(self) -> None:
        assert rerank("q", [], lambda q, t: 1.0) == []

    def test_deterministic_under_concurrency(self) -> None:
        rng = random.Random(7)
        found = matches(*[rng.random() for _ in range(24)])
        table = {m.id: round(rng.random(), 1) for m in found}
        in_flight, peak = 0, 0
        lock = threading.Lock()

        def slow(query: str, text: str) -> float:
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            time.sleep(random.random() * 0.003)
            with lock:
                in_flight -= 1
            return table[text.removeprefix("text of ")]

        first = rerank("q", found, slow, max_concurrency=8)
        for _ in range(3):
            again = rerank("q", found, slow, max_concurrency=8)
            assert [(r.match.id, r.rerank) for r in again] == [(r.match.id, r.rerank)
                                                                for r in first]
        assert peak > 1  # the scorer calls really overlapped
        sequential = rerank("q", found, slow, max_concurrency=1)
        assert [r.match.id for r in sequential] == [r.match.id for r in first]

    def test_batch_scorer(self) -> None:
        class Batch:
            def __init__(self) -> None:
                self.calls = 0

            def score_batch(self, query: str, texts: Sequence[str]) -> list[float]:
                self.calls += 1
                return [0.1 * len(t) % 1 for t in texts]

        scorer = Batch()
        out = rerank("q", matches(0.5, 0.4, 0.3), scorer)
        assert scorer.calls == 1 and len(out) == 3

        class Short:
            def score_batch(self, query: str, texts: Sequence[str]) -> list[float]:
                return [0.5]

        with pytest.raises(ValidationError, match="1 scores for 2 texts"):
            rerank("q", matches(0.5, 0.4), Short())

    def test_text_falls_back_to_metadata(self) -> None:
        seen: list[str] = []
        found = [Match(id="a", score=0.5, metadata={"text": "from metadata"}),
                 Match(id="b", score=0.4, metadata={"other": 1})]
        rerank("q", found, lambda q, t: seen.append(t) or 0.5, max_concurrency=1)
        assert seen == ["from metadata", ""]


class TestReranker:
    def test_from_mapping(self) -> None:
        r = Reranker.from_value({"scorer": lambda q, t: 0.5,
                                 "weights": {"semantic": 0.5, "vector": 0.3, "position": 0.2},
                                 "top_k": 5})
        assert r.weights == RerankWeights(0.5, 0.3, 0.2) and r.top_k == 5
        assert Reranker.from_value(r) is r

    @pytest.mark.parametrize(("value", "message"), [
        ({"model": "gpt"}, "unknown reranker option"),
        ({"scorer": lambda q, t: 0.5, "top_k": 0}, "top_k"),
        ({"scorer": "gpt-4"}, "callable"),
        ({"scorer": lambda q, t: 0.5, "vector_normalization": "zscore"}, "vector_normalization"),
        ("gpt-4", "Reranker or a mapping"),
    ])
    def test_invalid(self, value: object, message: str) -> None:
        with pytest.raises(ValidationError, match=message):
            Reranker.from_value(value)  # type: ignore[arg-type]


class TestScorers:
    def test_llm_scorer_parses_the_reply(self) -> None:
        prompts: list[str] = []

        def llm(prompt: str) -> str:
            prompts.append(prompt)
            return "Relevance: 0.75 (fairly relevant)"

        scorer = LLMScorer(llm)
        assert scorer("what is x", "x is y") == 0.75
        assert "what is x" in prompts[0] and "x is y" in prompts[0]

    @pytest.mark.parametrize(("reply", "scale", "expected"), [
        ("1", 1.0, 1.0), ("0", 1.0, 0.0), ("1.7", 1.0, 1.0), ("-3", 1.0, 0.0),
        ("8/10", 10.0, 0.8), ("  .5", 1.0, 0.5),
    ])
    def test_llm_scorer_scales_and_clips(self, reply: str, scale: float,
                                         expected: float) -> None:
        assert LLMScorer(lambda p: reply, scale=scale)("q", "t") == pytest.approx(expected)

    def test_llm_scorer_without_a_number(self) -> None:
        with pytest.raises(ValidationError, match="no relevance number"):
            LLMScorer(lambda p: "I cannot say")("q", "t")
        with pytest.raises(ValidationError, match="not str"):
            LLMScorer(lambda p: 0.5)("q", "t")  # type: ignore[arg-type,return-value]

    def test_llm_scorer_arguments(self) -> None:
        with pytest.raises(ValidationError, match="query"):
            LLMScorer(lambda p: "1", prompt="no placeholders")
        with pytest.raises(ValidationError, match="scale"):
            LLMScorer(lambda p: "1", scale=0)

    def test_term_overlap(self) -> None:
        scorer = TermOverlapScorer()
        assert scorer("How do namespaces isolate tenants?", "Namespaces isolate tenants.") == \
            pytest.approx(3 / 5)  # how, do (not stopwords) are missing; 3 of 5 found
        assert scorer("the a of", "anything") == 0.0
        assert scorer("Index", "index") == 1.0

    def test_cross_encoder_with_a_loaded_model(self) -> None:
        class Model:  # a stand-in with the sentence-transformers CrossEncoder interface
            def predict(self, pairs: list[tuple[str, str]], **kwargs: object) -> list[float]:
                return [0.0 if "no" in t else 4.0 for _, t in pairs]

        scorer = CrossEncoderScorer(model=Model())
        scores = scorer.score_batch("q", ["yes match", "no match"])
        assert scores[0] == pytest.approx(1 / (1 + 2.718281828459045 ** -4.0))
        assert scores[1] == 0.5
        assert CrossEncoderScorer(model=Model(), sigmoid=False)("q", "yes") == 1.0
        assert scorer.score_batch("q", []) == []

    def test_cross_encoder_needs_the_extra(self) -> None:
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            with pytest.raises(ConfigError, match=r"vectorport\[sentence-transformers\]"):
                CrossEncoderScorer("cross-encoder/ms-marco-MiniLM-L-6-v2")
        else:  # pragma: no cover - only where the extra is installed
            pytest.skip("sentence-transformers is installed")
