"""The facade around any adapter: config, registry, retries, hooks, batching, async."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

import vectorport
from vectorport import (
    BackendError,
    ConfigError,
    Secret,
    TransientBackendError,
    ValidationError,
    hookimpl,
    parse_url,
)
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.adapters.local.capabilities import LOCAL_CAPABILITIES
from vectorport.core.capabilities import Capabilities
from vectorport.core.config import ConnectionURL
from vectorport.core.hooks import OperationEvent
from vectorport.core.registry import AdapterEntry, Registry
from vectorport.core.retry import RetryPolicy
from vectorport.core.types import IndexSpec, Record

FAST_RETRY = RetryPolicy(attempts=4, base_seconds=0.0001, cap_seconds=0.001)


def test_unknown_scheme_lists_installed_backends() -> None:
    with pytest.raises(ConfigError) as info:
        vectorport.connect("nosuch://x")
    assert "local" in str(info.value) and "memory://" in str(info.value)


def test_default_connect_uses_env_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("VECTORPORT_URL", f"local://{tmp_path}/env.db")
    with vectorport.connect() as store:
        assert isinstance(store.adapter, LocalAdapter)
        assert str(store.adapter.path).endswith("env.db")


def test_default_connect_without_env_is_embedded_local(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.delenv("VECTORPORT_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with vectorport.connect() as store:
        assert store.backend == "local"
        assert str(store.adapter.path).startswith(str(tmp_path))  # type: ignore[attr-defined]


def test_credentials_are_masked() -> None:
    url = parse_url("pgvector://alice:s3cret-pw@db.example:5432/app?schema=x&api_key=KEY123")
    for text in (repr(url), str(url), url.redacted(), repr(url.password), str(url.secrets)):
        assert "s3cret-pw" not in text and "KEY123" not in text
    assert url.password is not None and url.password.reveal() == "s3cret-pw"
    assert repr(Secret("abc")) == "Secret('********')"


def test_credential_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    url = parse_url("x://?api_key_env=MY_KEY")
    with pytest.raises(ConfigError, match="MY_KEY"):
        url.credential("api_key")
    monkeypatch.setenv("MY_KEY", "value-1")
    secret = url.credential("api_key")
    assert secret is not None and secret.reveal() == "value-1"


def test_unknown_url_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="bogus"):
        vectorport.connect("memory://?bogus=1")


def test_load_config(tmp_path: Any) -> None:
    path = tmp_path / "vp.toml"
    path.write_text('[vectorport]\nurl = "memory://"\n')
    assert vectorport.load_config(path)["url"] == "memory://"
    path.write_text("nothing = 1\n")
    with pytest.raises(ConfigError):
        vectorport.load_config(path)


# --- plugins --------------------------------------------------------------------------


class _BrokenPlugin:
    @hookimpl
    def vectorport_register_adapters(self, register: Any) -> None:
        raise RuntimeError("boom")


class _GoodPlugin:
    @hookimpl
    def vectorport_register_adapters(self, register: Any) -> None:
        register(AdapterEntry(name="other", schemes=("other",), adapter=LocalAdapter,
                              capabilities=LOCAL_CAPABILITIES))


def test_broken_plugin_is_reported_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    registry = Registry()
    with caplog.at_level(logging.WARNING):
        registry.register_plugin(_BrokenPlugin(), "broken-one")
        registry.register_plugin(_GoodPlugin(), "good-one")
        entries = registry.entries
    assert "other" in entries and "local" in entries
    assert "broken-one" in registry.broken
    assert "broken-one" in caplog.text
    with pytest.raises(ConfigError, match="broken-one"):
        registry.by_scheme("zzz")


def test_missing_sdk_names_the_extra() -> None:
    entry = AdapterEntry(name="ghost", schemes=("ghost",), adapter="no.such:Adapter",
                         capabilities=Capabilities(), requires=("no_such_module_xyz",),
                         extra="ghost")
    with pytest.raises(ConfigError, match=r"vectorport\[ghost\]"):
        entry.load()


# --- retries, hooks and batching through a flaky adapter --------------------------------


class FlakyAdapter(LocalAdapter):
    """The local adapter with injected failures, to exercise the facade's machinery."""

    backend: ClassVar[str] = "flaky"

    def __init__(self, fail_times: int = 0, batch_limit: int = 1000,
                 fail_on_batch: int | None = None) -> None:
        super().__init__(None)
        self.fail_times = fail_times
        self.calls = 0
        self.batches: list[int] = []
        self.fail_on_batch = fail_on_batch
        self._caps = Capabilities(**{**{f: getattr(LOCAL_CAPABILITIES, f) for f in
                                        LOCAL_CAPABILITIES.__dataclass_fields__},
                                     "max_batch_size": batch_limit})

    @property
    def capabilities(self) -> Capabilities:
        return self._caps

    def query(self, index: IndexSpec, request: Any) -> Any:
        self.calls += 1
        if self.calls <= self.fail_times:
            raise TransientBackendError("temporarily unavailable")
        return super().query(index, request)

    def upsert(self, index: IndexSpec, namespace: str, records: Sequence[Record]) -> None:
        self.batches.append(len(records))
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            raise BackendError("disk full")
        super().upsert(index, namespace, records)


def test_transient_errors_are_retried() -> None:
    store = vectorport.Store(FlakyAdapter(fail_times=2), retry=FAST_RETRY)
    index = store.create_index("flaky", 2)
    index.upsert([("a", [1, 0])])
    assert [m.id for m in index.query([1, 0])] == ["a"]
    assert store.adapter.calls == 3  # type: ignore[attr-defined]


def test_retries_give_up() -> None:
    store = vectorport.Store(FlakyAdapter(fail_times=10), retry=FAST_RETRY)
    index = store.create_index("flaky", 2)
    with pytest.raises(TransientBackendError):
        index.query([1, 0])
    assert store.adapter.calls == 4  # type: ignore[attr-defined]


def test_batches_follow_the_declared_limit_and_report_written_ids() -> None:
    adapter = FlakyAdapter(batch_limit=3, fail_on_batch=3)
    store = vectorport.Store(adapter, retry=FAST_RETRY)
    index = store.create_index("batched", 2)
    records = [(f"r{i}", [1, i]) for i in range(10)]
    with pytest.raises(BackendError) as info:
        index.upsert(records)
    assert adapter.batches == [3, 3, 3]
    assert info.value.written_ids == tuple(f"r{i}" for i in range(6))
    assert index.count() == 6
    adapter.fail_on_batch = None
    assert index.upsert(records) == 10
    assert index.count() == 10


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str | None]] = []
        self.seen: list[OperationEvent] = []

    @hookimpl
    def vectorport_before_operation(self, event: OperationEvent) -> None:
        if event.namespace == "forbidden":
            raise PermissionError("tenant policy")
        self.events.append(("before", event.operation))
        self.seen.append(event)

    @hookimpl
    def vectorport_after_operation(self, event: OperationEvent, error: Any, seconds: float) -> None:
        self.events.append(("after", event.operation))


def test_operation_hooks() -> None:
    registry = Registry(load_entry_points=False)
    recorder = _Recorder()
    registry.register_plugin(recorder, "recorder")
    store = vectorport.Store(LocalAdapter(None), registry=registry)
    index = store.create_index("hooked", 2)
    index.upsert([("a", [1, 0])])
    index.query([1, 0], top_k=3)
    assert ("before", "upsert") in recorder.events and ("after", "query") in recorder.events
    # a query's event carries its top_k both as top_k and as the older single number size
    query_event = next(e for e in recorder.seen if e.operation == "query")
    assert (query_event.size, query_event.top_k, query_event.record_count) == (3, 3, None)
    with pytest.raises(PermissionError):
        index.query([1, 0], namespace="forbidden")
    assert not Registry(load_entry_points=False).has_operation_hooks()


def test_validation_before_io() -> None:
    adapter = FlakyAdapter()
    store = vectorport.Store(adapter)
    index = store.create_index("valid", 3)
    with pytest.raises(ValidationError):
        index.upsert([("ok", [1, 2, 3]), ("bad", [1, 2])])
    assert adapter.batches == []
    with pytest.raises(ValidationError):
        index.upsert({"id": "x", "vector": [1, 2, 3]})  # a single record, not a list


def test_vectors_are_copied_not_aliased() -> None:
    store = vectorport.connect("memory://")
    index = store.create_index("alias", 3)
    vec = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    index.upsert([("a", vec)])
    vec[:] = [0.0, 1.0, 0.0]
    np.testing.assert_array_equal(index.fetch(["a"])["a"].vector, [1, 0, 0])


def test_durable_local_survives_reopen(tmp_path: Any) -> None:
    url = f"local://{tmp_path}/d.db"
    with vectorport.connect(url) as store:
        index = store.create_index("keep", 2, "euclidean", sparse=True)
        index.upsert([{"id": "a", "vector": [1, 0], "metadata": {"tags": ["x"], "n": 1.0},
                       "sparse": {"indices": [5], "values": [2.0]}, "document": "doc"}])
        index.upsert([("b", [0, 1])], namespace="ns")
    with vectorport.connect(url) as store:
        index = store.index("keep")
        assert index.spec.metric == "euclidean" and index.spec.sparse
        rec = index.fetch(["a"])["a"]
        assert dict(rec.metadata) == {"tags": ("x",), "n": 1.0}
        assert isinstance(rec.metadata["n"], float)
        assert rec.document == "doc" and rec.sparse is not None
        assert index.list_namespaces() == ["", "ns"]


def test_patch_and_list_on_local() -> None:
    store = vectorport.connect("memory://")
    index = store.create_index("patchy", 2)
    assert isinstance(index, vectorport.PatchableIndex)
    assert isinstance(index, vectorport.ListableIndex)
    index.upsert([(f"id{i:02d}", [1, i], {"k": i, "drop": True}) for i in range(25)])
    assert index.patch("id03", metadata={"k": 99, "drop": None, "new": "v"})
    assert not index.patch("missing", metadata={"k": 1})
    assert dict(index.fetch(["id03"])["id03"].metadata) == {"k": 99, "new": "v"}
    page = index.list_ids(limit=10)
    assert page.ids == tuple(f"id{i:02d}" for i in range(10)) and page.next_cursor
    assert index.list_ids(limit=3, cursor=page.next_cursor).ids == ("id10", "id11", "id12")
    assert list(index.iter_ids(page_size=7)) == [f"id{i:02d}" for i in range(25)]
    assert list(index.iter_ids(filter={"k": {"$gte": 20}})) == ["id03"] + [f"id{i}" for i in range(20, 25)]


async def test_async_store_thread_fallback() -> None:
    astore = vectorport.AsyncStore(vectorport.connect("memory://"))
    assert not astore.native
    index = await astore.create_index("async_ix", 2)
    await index.upsert([("a", [1, 0]), ("b", [0, 1])])
    got = await index.query([1, 0], top_k=1)
    assert [m.id for m in got] == ["a"]
    assert await index.count() == 2
    assert list(await index.fetch(["b"])) == ["b"]
    await astore.close()


def test_hybrid_scale() -> None:
    dense, sparse = vectorport.hybrid_scale([1.0, 2.0], vectorport.SparseVector((1,), (4.0,)), 0.25)
    assert dense == [0.25, 0.5] and sparse.values == (3.0,)
    with pytest.raises(ValidationError):
        vectorport.hybrid_scale([1.0], vectorport.SparseVector((1,), (1.0,)), 1.5)


def test_connection_url_roundtrip() -> None:
    url = ConnectionURL(scheme="x", host="h", port=1, path="/p", query={"a": "b"})
    assert url.redacted() == "x://h:1/p?a=b"


# --- plugin entries carry what the rest of the project needs to know of a backend ------


def test_one_plugin_module() -> None:
    from vectorport.core import hooks, plugin, registry

    assert hooks.hookimpl is plugin.hookimpl is vectorport.hookimpl
    assert registry.AdapterEntry is plugin.AdapterEntry is vectorport.AdapterEntry
    assert registry.Registry is plugin.Registry


def test_entry_query_tool_keys_are_immutable() -> None:
    keys = {"nprobe": "probes"}
    entry = AdapterEntry(name="x", schemes=("x",), adapter=LocalAdapter,
                         capabilities=LOCAL_CAPABILITIES, query_tool_keys=keys)
    keys["ef"] = "ef"  # the entry kept its own copy
    assert dict(entry.query_tool_keys or {}) == {"nprobe": "probes"}
    with pytest.raises(TypeError):
        entry.query_tool_keys["ef"] = "ef"  # type: ignore[index]


def test_built_in_entries_declare_launchers_keys_and_distributions() -> None:
    from vectorport.agent import SECTION_KEYS

    entries = vectorport.default_registry().entries
    built_in = [e for e in entries.values()
                if isinstance(e.adapter, str) and e.adapter.startswith("vectorport.adapters.")]
    assert {e.name for e in built_in} >= {"local", "pgvector", "chroma", "milvus"}
    for entry in built_in:
        assert callable(entry.load_test_launcher()), entry.name
        assert entry.name in SECTION_KEYS
        assert {"namespace", "min_score"} <= set(SECTION_KEYS[entry.name])
        assert entry.sdk_distributions or entry.name == "local"
    assert entries["dictstore"].test_launcher is None and "dictstore" not in SECTION_KEYS


def test_after_hooks_see_a_refusal() -> None:
    registry = Registry(load_entry_points=False)
    recorder = _Recorder()
    seen: list[BaseException | None] = []

    class _Errors:
        @hookimpl
        def vectorport_after_operation(self, event: OperationEvent, error: Any,
                                       seconds: float) -> None:
            seen.append(error)

    registry.register_plugin(recorder, "recorder")
    registry.register_plugin(_Errors(), "errors")
    index = vectorport.Store(LocalAdapter(None), registry=registry).create_index("refuse", 2)
    with pytest.raises(PermissionError):
        index.count("forbidden")
    assert isinstance(seen[-1], PermissionError)
