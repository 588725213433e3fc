"""The adapter kit's helpers, on their own (the adapters' suites exercise them on engines)."""

from __future__ import annotations

import random
import threading

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import vectorport
import vectorport.adapterkit as kit
from vectorport.adapterkit import (
    ConfigError,
    ErrorKind,
    ErrorTranslator,
    FilterCompiler,
    IndexExistsError,
    IndexNotFoundError,
    Option,
    OptionSpec,
    RetryPolicy,
    TransientBackendError,
    UpkeepSchedule,
    ValidationError,
    at_or_above_cut,
    batches,
    complete_at_cut,
    fetch_many_until_settled,
    fetch_until_settled,
    prefix_upper_bound,
    read_only_float32,
    unique,
    url_cost,
)
from vectorport.core.config import parse_url
from vectorport.core.filters.parse import parse_filter

# -- ranking --------------------------------------------------------------------------


def _engine(scores: dict[str, float], seed: int):  # type: ignore[no-untyped-def]
    """An engine that ranks by score and breaks ties in a random order of its own."""
    rng = random.Random(seed)
    order = list(scores)
    rng.shuffle(order)
    ranked = sorted(order, key=lambda i: -scores[i])  # stable: ties keep the shuffle
    calls: list[int] = []

    def search(depth: int) -> list[str]:
        calls.append(depth)
        return ranked[:depth]

    return search, calls


def _contract_top(scores: dict[str, float], top_k: int) -> list[str]:
    return sorted(scores, key=lambda i: (-scores[i], i))[:top_k]


@pytest.mark.parametrize("seed", range(20))
def test_candidates_hold_the_contract_top_k_under_ties(seed: int) -> None:
    rng = random.Random(seed)
    scores = {f"id{n:03d}": float(rng.choice([0.1, 0.5, 0.5, 0.5, 0.9])) for n in range(60)}
    top_k = rng.randint(1, 20)
    search, calls = _engine(scores, seed)
    found = fetch_until_settled(search, scores.__getitem__, top_k, cap=10_000)
    # the facade orders and cuts: what it would return is the contract's answer
    assert sorted(found, key=lambda i: (-scores[i], i))[:top_k] == _contract_top(scores, top_k)
    assert calls[0] == top_k + 1


@pytest.mark.parametrize("seed", range(20))
def test_only_what_can_make_the_cut_is_kept(seed: int) -> None:
    rng = random.Random(seed)
    scores = {f"r{i:03d}": rng.choice([0.1, 0.2, 0.5, 0.5, 0.7, 0.9]) for i in range(40)}
    top_k = rng.randint(1, 12)
    search, _ = _engine(scores, seed)
    found = fetch_until_settled(search, scores.__getitem__, top_k, cap=40)
    kept = at_or_above_cut(found, top_k, scores.__getitem__)
    assert _contract_top({i: scores[i] for i in kept}, top_k) == _contract_top(scores, top_k)
    cut = sorted(scores.values(), reverse=True)[top_k - 1]
    assert set(kept) == {i for i in found if scores[i] >= cut}  # ties with the cut stay


def test_the_cut_keeps_short_answers_and_unordered_scores() -> None:
    assert at_or_above_cut(["a"], 3, {"a": 0.1}.__getitem__) == ["a"]
    assert at_or_above_cut(["a", "b"], 0, {"a": 0.1, "b": 0.2}.__getitem__) == []
    nan = {"a": float("nan"), "b": 0.5, "c": 0.4}
    assert at_or_above_cut(["a", "b", "c"], 2, nan.__getitem__) == ["a", "b", "c"]


def test_no_tie_means_one_search() -> None:
    scores = {f"r{n}": float(n) for n in range(50)}
    search, calls = _engine(scores, 1)
    fetch_until_settled(search, scores.__getitem__, 5, cap=10_000)
    assert calls == [6]


def test_the_cap_bounds_the_widening() -> None:
    scores = dict.fromkeys((f"r{n}" for n in range(100)), 1.0)
    search, calls = _engine(scores, 2)
    found = fetch_until_settled(search, scores.__getitem__, 3, cap=20)
    assert calls == [4, 8, 16, 20] and len(found) == 20


def test_min_score_stops_early() -> None:
    scores = dict.fromkeys((f"r{n}" for n in range(100)), 0.2)
    search, calls = _engine(scores, 3)
    fetch_until_settled(search, scores.__getitem__, 3, cap=10_000, min_score=0.5)
    assert calls == [4]


def test_many_queries_widen_only_the_unsettled() -> None:
    tied = dict.fromkeys((f"t{n}" for n in range(30)), 1.0)
    distinct = {f"d{n}": float(n) for n in range(30)}
    engines = [_engine(tied, 4)[0], _engine(distinct, 5)[0]]
    asked: list[tuple[tuple[int, ...], int]] = []

    def search(positions, depth):  # type: ignore[no-untyped-def]
        asked.append((tuple(positions), depth))
        return [engines[p](depth) for p in positions]

    score = {**tied, **distinct}.__getitem__
    answers = fetch_many_until_settled(2, search, score, 2, cap=10_000)
    assert asked == [((0, 1), 3), ((0,), 6), ((0,), 12), ((0,), 24), ((0,), 48)]
    assert len(answers[0]) == 30 and len(answers[1]) == 3


def test_complete_at_cut_rules() -> None:
    assert complete_at_cut([0.5, 0.4], 1, unseen_bound=0.4)
    assert not complete_at_cut([0.5, 0.5], 1, unseen_bound=0.5)
    assert complete_at_cut([], 3, unseen_bound=None)
    assert not complete_at_cut([0.9], 2, unseen_bound=0.1)
    assert complete_at_cut([0.9], 2, unseen_bound=0.1, min_score=0.2)


# -- exact rescoring over ranked lists ----------------------------------------------------


def _worst_ties(parts: dict[str, float], depth: int) -> list[str]:
    """An engine list: best first, ties in the worst order (largest id first)."""
    return sorted(parts, key=lambda i: (parts[i], i), reverse=True)[:depth]


@pytest.mark.parametrize("shallow", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_threshold_top_k_is_the_contract_answer(seed: int, shallow: bool) -> None:
    rng = random.Random(seed)
    ids = [f"r{n:02d}" for n in range(rng.randint(0, 40))]
    dense = {i: rng.choice([0.0, 0.25, 0.5, 1.0]) for i in ids}
    # a sparse list returns only items sharing a term: the others score 0 there
    sparse = {i: rng.choice([0.5, 1.0, 2.0]) for i in ids if rng.random() < 0.5}
    use_dense = rng.random() < 0.7
    top_k, cap = rng.randint(1, 45), rng.choice([1, 3, 17, 100])
    min_score = rng.choice([None, 0.0, 0.5, 1.5])
    scanned: list[int] = []

    def total(i: str) -> float:
        return (dense[i] if use_dense else 0.0) + sparse.get(i, 0.0)

    def scan() -> list[str]:
        scanned.append(1)
        return list(ids)

    def exhausted(ranked: list[tuple[str, float]], seen: object) -> list[tuple[str, float]]:
        zeros = [(i, 0.0) for i in ids if i not in sparse]
        return kit.scan_top_k([i for i, _ in ranked] + [i for i, _ in zeros], total,
                              str, top_k, min_score=min_score)

    lists = [kit.RankedList(lambda d: _worst_ties(sparse, d), sparse.__getitem__, missing=0.0)]
    if use_dense:
        lists.insert(0, kit.RankedList(lambda d: _worst_ties(dense, d), dense.__getitem__))
    got = kit.threshold_top_k(lists, total, str, top_k, min_score=min_score, cap=cap,
                              scan=scan, exhausted=exhausted,
                              first=top_k + 1 if shallow else None)
    want = sorted(((i, total(i)) for i in ids if min_score is None or total(i) >= min_score),
                  key=lambda p: (-p[1], p[0]))[:top_k]
    assert got == want


def test_threshold_top_k_widens_until_the_bound_is_beaten() -> None:
    parts = {f"r{n:03d}": 1.0 for n in range(200)} | {"best": 2.0}
    asked: list[int] = []

    def search(depth: int) -> list[str]:
        asked.append(depth)
        return _worst_ties(parts, depth)

    got = kit.threshold_top_k([kit.RankedList(search, parts.__getitem__)], parts.__getitem__,
                              str, 2)
    assert [i for i, _ in got] == ["best", "r000"]
    assert asked == [kit.first_depth(2), 4 * kit.first_depth(2), 16 * kit.first_depth(2)]
    assert kit.first_depth(2) == 18 and kit.first_depth(100, cap=50) == 50


def test_threshold_top_k_allows_for_float32_reordering() -> None:
    # the engine put "b" first (float32), exactly "a" is a hair better: the slack of the
    # bound keeps searching until both are seen
    exact = {"a": 1.0 + 1e-9, "b": 1.0}
    engine = ["b", "a"]
    depths: list[int] = []

    def search(depth: int) -> list[str]:
        depths.append(depth)
        return engine[:depth]

    got = kit.threshold_top_k([kit.RankedList(search, exact.__getitem__)], exact.__getitem__,
                              str, 1, cap=1, scan=lambda: engine)
    assert got == [("a", exact["a"])]


@pytest.mark.parametrize("metric", ["cosine", "dotproduct", "euclidean"])
def test_exact_scores_are_the_contract_scores(metric: str) -> None:
    from vectorport.conformance.reference import dense_score

    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(20, 5)).astype(np.float32)
    vectors[3] = 0.0  # cosine against a zero vector is 0
    query = rng.normal(size=5).astype(np.float32)
    got = kit.exact_scores(metric, query, vectors)  # type: ignore[arg-type]
    assert got.dtype == np.float64
    want = [dense_score(metric, query.tolist(), v.tolist()) for v in vectors]  # type: ignore[arg-type]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    one = kit.exact_scores(metric, query, vectors[0])  # type: ignore[arg-type]
    assert one.shape == (1,) and one[0] == pytest.approx(want[0], rel=1e-12)


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.integers(2, 40), st.integers(1, 1600), st.integers(0, 2**32 - 1),
                  st.sampled_from(["cosine", "dotproduct", "euclidean"]), st.booleans())
def test_exact_scores_of_a_row_do_not_depend_on_the_rows_scored_with_it(
        rows: int, dimension: int, seed: int, metric: str, fortran: bool) -> None:
    # A BLAS product's last bits change with the number of rows; a record's score must
    # not, or identical vectors rescored in different rounds (or on two backends that
    # rescore different depths) would tie-break by rounding instead of by id
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, dimension)).astype(np.float32).astype(np.float64)
    query = rng.normal(size=dimension).astype(np.float32)
    together = kit.exact_scores(metric, query, np.asfortranarray(vectors) if fortran
                                else vectors)  # type: ignore[arg-type]
    for row in (0, rows // 2, rows - 1):
        alone = kit.exact_scores(metric, query, vectors[row])  # type: ignore[arg-type]
        assert alone.tobytes() == together[row:row + 1].tobytes()
    assert kit.exact_scores(metric, query, vectors[1:]).tobytes() == (  # type: ignore[arg-type]
        together[1:].tobytes())


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(st.integers(1, 30), st.integers(1, 1024), st.integers(0, 2**32 - 1),
                  st.sampled_from(["cosine", "dotproduct", "euclidean"]))
def test_exact_scores_are_the_local_engines_scores_bit_for_bit(
        rows: int, dimension: int, seed: int, metric: str) -> None:
    # backends that rescore (Qdrant, LanceDB, Milvus...) and the embedded default store
    # give the same call the same score bits
    from vectorport.adapters.local import ranking as local

    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(rows, dimension)).astype(np.float32)
    query = rng.normal(size=(1, dimension)).astype(np.float32)
    every = np.arange(rows)
    want = local.pair_scores(metric, local.prepare(query), np.zeros(rows, dtype=np.intp),  # type: ignore[arg-type]
                             matrix, every, local.wide_norms(matrix))
    got = kit.exact_scores(metric, query[0], matrix)  # type: ignore[arg-type]
    assert got.tobytes() == want.tobytes()


def test_dense_scores_score_a_search_at_once_and_each_row_once() -> None:
    """A search's rows are scored in one call, with the bits each row gets alone (the
    metric's exact score), and a row met again is not scored again."""
    rng = np.random.default_rng(7)
    rows = {f"r{i}": rng.normal(size=16) for i in range(12)}
    query = rng.normal(size=16)
    asked: list[list[str]] = []

    def matrix(ids: list[str] | tuple[str, ...]) -> np.ndarray:
        asked.append(list(ids))
        return np.stack([rows[i] for i in ids])

    for metric in ("cosine", "dotproduct", "euclidean"):
        asked.clear()
        scores = kit.DenseScores(metric, query, str, matrix)
        first = list(rows)[:10]
        assert scores.primed(first) == first
        assert scores.primed(list(rows)) and asked == [first, list(rows)[10:]]
        for rid, vector in rows.items():  # read back: no more calls, the same bits
            assert scores(rid) == float(kit.exact_scores(metric, query, vector[None, :])[0])
        assert len(asked) == 2
        unprimed = kit.DenseScores(metric, query, str, matrix)
        assert unprimed("r3") == scores("r3") and asked[-1] == ["r3"]


def test_contract_order_breaks_ties_by_id() -> None:
    pairs = [("b", 1.0), ("a", 1.0), ("c", 2.0)]
    assert kit.contract_order(pairs, str) == [("c", 2.0), ("a", 1.0), ("b", 1.0)]


# -- batching ---------------------------------------------------------------------------


def test_an_upkeep_schedule_counts_estimates_and_keeps_the_slowest_rate() -> None:
    schedule = UpkeepSchedule(0.001)
    assert not schedule.count(400, 0) and schedule.written == 0  # 0: never due
    assert not schedule.count(400, 1_000) and schedule.count(600, 1_000)
    assert schedule.estimate == pytest.approx(1.0)
    assert schedule.time_short() is None  # no deadline: it fits
    with vectorport.deadline(0.5):
        left = schedule.time_short()
        assert left is not None and 0.0 <= left <= 0.5  # 1.25 s needed
    with vectorport.deadline(5.0):
        assert schedule.time_short() is None
    assert schedule.defer() and not schedule.defer()  # said once
    schedule.ran(3.0)  # 3 ms a unit: slower than the floor
    assert schedule.written == 0 and not schedule.deferred
    assert schedule.seconds_per_unit == pytest.approx(0.003)
    schedule.count(100, 1_000)
    schedule.ran(0.0)  # a quick run never lowers the estimate
    assert schedule.seconds_per_unit == pytest.approx(0.003) and schedule.written == 0


def test_an_upkeep_schedule_says_when_due_and_learns_only_from_its_own_runs() -> None:
    schedule = UpkeepSchedule(0.001)
    assert not schedule.due(1_000) and not schedule.due(0)
    schedule.count(999, 1_000)
    assert not schedule.due(1_000) and schedule.due(999) and not schedule.due(0)
    schedule.defer()
    schedule.ran(None)  # the user's optimize after a few units: mostly fixed cost
    assert schedule.written == 0 and not schedule.deferred
    assert schedule.seconds_per_unit == pytest.approx(0.001)


def test_an_upkeep_schedule_runs_what_fits_and_says_once_what_waits() -> None:
    schedule = UpkeepSchedule(0.001)
    runs: list[int] = []
    schedule.count(1_000, 1_000)  # an estimated 1 s: 1.25 s needed
    with vectorport.deadline(0.5):
        left = schedule.run_or_defer(lambda: runs.append(schedule.written))
        assert left is not None and 0.0 <= left <= 0.5
        assert schedule.run_or_defer(lambda: runs.append(schedule.written)) is None  # once
    assert runs == [] and schedule.written == 1_000
    assert schedule.run_or_defer(lambda: runs.append(schedule.written)) is None
    assert runs == [1_000] and schedule.written == 0 and not schedule.deferred


def test_batches_by_count_and_cost() -> None:
    items = list(range(10))
    assert list(batches(items, 4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    by_cost = list(batches(items, 100, cost=lambda i: i, max_cost=10))
    assert by_cost == [[0, 1, 2, 3, 4], [5], [6], [7], [8], [9]]
    assert all(sum(b) <= 10 or len(b) == 1 for b in by_cost)
    assert list(batches([50], 3, cost=lambda i: i, max_cost=10)) == [[50]]  # alone
    assert list(batches([], 3)) == []
    with pytest.raises(ValueError):
        list(batches(items, 0))


def test_batches_ask_the_cost_only_of_runs_the_bound_does_not_clear() -> None:
    items = list(range(10))
    asked: list[int] = []

    def cost(i: int) -> int:
        asked.append(i)
        return i

    # runs of 4 by count; only [4, 5, 6, 7] has a bound (its sum) above 20
    cut = list(batches(items, 4, cost=cost, max_cost=20, bound=sum))
    assert cut == [[0, 1, 2, 3], [4, 5, 6], [7], [8, 9]]
    assert asked == [4, 5, 6, 7]
    # whatever the bound, the cut keeps the limits and every item once, in order
    for bound in (sum, lambda run: 10**6, lambda run: sum(run) + 5):
        runs = list(batches(items, 4, cost=lambda i: i, max_cost=20, bound=bound))
        assert [i for run in runs for i in run] == items
        assert all(len(run) <= 4 and (sum(run) <= 20 or len(run) == 1) for run in runs)


def test_unique_and_url_cost() -> None:
    assert unique(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
    assert url_cost("a b/é") == len("a%20b%2F%C3%A9") + 5


# -- wire -------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["abc", "a\U0010ffff", "\ud7ff", "z", "é", "x\U0010ffff\U0010ffff"])
def test_prefix_upper_bound_is_the_least_string_above_the_prefix_range(prefix: str) -> None:
    upper = prefix_upper_bound(prefix)
    assert upper is not None
    for inside in (prefix, prefix + "\U0010ffff" * 3, prefix + "\x00"):
        assert inside < upper
    assert not upper.startswith(prefix)
    assert all(not 0xD800 <= ord(c) <= 0xDFFF for c in upper)


def test_prefix_upper_bound_without_one() -> None:
    assert prefix_upper_bound("") is None
    assert prefix_upper_bound("\U0010ffff\U0010ffff") is None


def test_read_only_float32() -> None:
    vector = read_only_float32([1, 2.5])
    assert vector.dtype == np.float32 and not vector.flags.writeable
    assert vector.tolist() == [1.0, 2.5]


# -- options ----------------------------------------------------------------------------

QUERY = OptionSpec("demo", "query", (
    Option("exact", "bool", default=False),
    Option("mode", choices=("fast", "slow")),
    Option("tags", "str_map", check=lambda t: "may not name 'x'" if "x" in t else None),
))
URL = OptionSpec("demo", "URL", (
    Option("api_key", "credential"), Option("timeout", "seconds", default=60.0),
    Option("retries", "int", default=0), Option("verbose", "bool"),
))


def test_query_options_checked_and_defaulted() -> None:
    assert QUERY.parse({}) == {"exact": False}
    assert QUERY.parse({"mode": "fast", "tags": {"a": "b"}}) == {
        "exact": False, "mode": "fast", "tags": {"a": "b"}}
    with pytest.raises(ValidationError, match=r"demo query options: unknown option\(s\) nope; "
                       r"known: exact, mode, tags"):
        QUERY.parse({"nope": 1})
    with pytest.raises(ValidationError, match="exact must be true or false, got 1"):
        QUERY.parse({"exact": 1})
    with pytest.raises(ValidationError, match="mode must be one of 'fast', 'slow'"):
        QUERY.parse({"mode": "medium"})
    with pytest.raises(ValidationError, match="tags may not name 'x'"):
        QUERY.parse({"tags": {"x": "y"}})
    with pytest.raises(ValidationError, match="must be a dict"):
        QUERY.parse([])  # type: ignore[arg-type]


def test_url_options_convert_text_and_never_show_credentials() -> None:
    url = parse_url("demo://?api_key=hunter2&timeout=2.5&retries=3&verbose=yes")
    assert URL.url(url) == {"timeout": 2.5, "retries": 3, "verbose": True}
    assert URL.url(parse_url("demo://?api_key_env=HOME")) == {"timeout": 60.0, "retries": 0}
    for bad, message in (("timeout=0", "positive number of seconds"),
                         ("timeout=soon", "must be a number"),
                         ("retries=1.5", "must be an integer"),
                         ("verbose=maybe", "true or false"),
                         ("other=1", r"unknown option\(s\) other")):
        with pytest.raises(ConfigError, match=message) as raised:
            URL.url(parse_url(f"demo://?api_key=hunter2&{bad}"))
        assert "hunter2" not in str(raised.value)


def test_connection_url_seconds() -> None:
    url = parse_url("x://?t=1.5&z=0&n=nan")
    assert url.seconds_option("t", 9.0) == 1.5
    assert url.seconds_option("missing", 9.0) == 9.0
    with pytest.raises(ConfigError):
        url.seconds_option("z", 1.0)
    with pytest.raises(ConfigError):
        url.float_option("n", 1.0)


# -- errors -----------------------------------------------------------------------------


class _SdkError(Exception):
    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(f"HTTP {status}")


def _classify(exc: BaseException) -> ErrorKind:
    status = getattr(exc, "status", 0)
    return {404: ErrorKind.NOT_FOUND, 409: ErrorKind.CONFLICT, 503: ErrorKind.TRANSIENT}.get(
        status, ErrorKind.OTHER)


TRANSLATOR = ErrorTranslator("demo", _classify)


def test_error_translation() -> None:
    with pytest.raises(IndexNotFoundError):
        TRANSLATOR.call("describe", lambda: (_ for _ in ()).throw(_SdkError(404)), index="i")
    with pytest.raises(IndexExistsError):
        TRANSLATOR.call("create", lambda: (_ for _ in ()).throw(_SdkError(409)), index="i")
    with pytest.raises(TransientBackendError, match="demo query failed: _SdkError: HTTP 503") as t:
        TRANSLATOR.call("query", lambda: (_ for _ in ()).throw(_SdkError(503)))
    assert isinstance(t.value.__cause__, _SdkError)
    other = TRANSLATOR.error(_SdkError(400), "query", index="i")
    assert type(other) is kit.BackendError
    assert type(TRANSLATOR.error(ConnectionResetError(), "x")) is TransientBackendError
    kept = ValidationError("mine")
    assert TRANSLATOR.error(kept, "x") is kept


def test_translated_calls_retry_transient_failures_only() -> None:
    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise _SdkError(503)
        return "ok"

    fast = RetryPolicy(attempts=5, base_seconds=0.0, cap_seconds=0.0)
    assert TRANSLATOR.call("query", flaky, retry=fast) == "ok" and len(attempts) == 3
    attempts.clear()
    with pytest.raises(kit.BackendError):
        TRANSLATOR.call("query", lambda: (attempts.append(1), (_ for _ in ()).throw(
            _SdkError(400)))[1], retry=fast)
    assert len(attempts) == 1


# -- filters ----------------------------------------------------------------------------


class _Counting(FilterCompiler[str]):
    cache_size = 2

    def __init__(self) -> None:
        super().__init__()
        self.built = 0
        self.lock = threading.Lock()

    def build(self, node: kit.Filter) -> str:
        with self.lock:
            self.built += 1
        return repr(node)


def test_filter_compiler_memoises_by_literal() -> None:
    compiler = _Counting()
    a, b, c = (parse_filter({"n": v}) for v in (1, 1.0, True))
    assert a == b  # one filter by value, but compiled apart: the literal differs
    for node in (a, a, b, b, a):
        compiler.compile(node)
    assert compiler.built == 2
    compiler.compile(c)  # evicts the least recently used (b)
    compiler.compile(b)
    assert compiler.built == 4


def test_kit_reexports_what_adapters_need() -> None:
    for name in ("Adapter", "Capabilities", "IndexSpec", "QueryRequest", "Match", "Record",
                 "Condition", "And", "Or", "Not", "Nor", "UnsupportedFeatureError",
                 "ConnectionURL", "score_from_distance"):
        assert hasattr(kit, name), name


def test_number_and_string_checks() -> None:
    import re

    spec = OptionSpec("demo", "index", (
        Option("n", "int", check=kit.within(1, 10)),
        Option("s", check=kit.matching(re.compile(r"[a-z]+"), "must be lower-case letters")),
    ))
    assert spec.parse({"n": 10, "s": "abc"}) == {"n": 10, "s": "abc"}
    with pytest.raises(ValidationError, match=r"n must be in \[1, 10\], got 11"):
        spec.parse({"n": 11})
    with pytest.raises(ValidationError, match="s must be lower-case letters"):
        spec.parse({"s": "ABC"})


# -- on a real engine ---------------------------------------------------------------------


@pytest.mark.parametrize("top_k", [1, 4, 9])
def test_ties_at_the_cut_on_chroma_match_the_reference(top_k: int) -> None:
    """Chroma returns equal distances in no set order; through the kit's widening the
    facade's answer is the reference adapter's (the oracle), ids in order."""
    pytest.importorskip("chromadb")
    import vectorport

    rng = random.Random(top_k)
    records = [(f"r{n:02d}", [1.0, 0.0, 0.0] if n % 3 else [0.0, 1.0, 0.0], {"n": n})
               for n in rng.sample(range(40), 40)]
    answers = []
    for url in ("memory://", "chroma+memory://"):
        with vectorport.connect(url) as store:
            index = store.create_index("ties", 3)
            index.upsert(records)
            answers.append([(m.id, round(m.score, 6)) for m in index.query(
                [1.0, 0.0, 0.0], top_k=top_k, filter={"n": {"$gte": 2}})])
    assert answers[0] == answers[1]
    assert len(answers[0]) == top_k


def test_index_specs_round_trip_through_json() -> None:
    spec = kit.IndexSpec(name="docs", dimension=3, metric="euclidean", sparse=True,
                         index_type="hnsw", index_params={"m": 8},
                         backend_options={"qdrant": {"on_disk": True}})
    text = kit.spec_to_json(spec)
    assert kit.spec_from_json(text) == spec
    assert text == kit.spec_to_json(kit.spec_from_json(text))  # equal specs, equal text
