"""Enumeration (CONTRACT §8): opaque scan cursors, and the scan every adapter gets.

An adapter that implements :class:`~vectorport.core.adapter.ScanningAdapter` pages
natively. Any other adapter that lists ids is scanned here, a page of ids and then one
``fetch`` of those ids, so that copy, export and verification work on every backend.

The cursor handed to users is a token that names the scan it belongs to (backend,
index, namespace and filter), so a cursor from another scan is refused with
:class:`ValidationError` instead of silently restarting or skipping records.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json

from vectorport.core.adapter import Adapter, IdListingAdapter, ScanningAdapter
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.filters import render_filter
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.oracle import matches
from vectorport.core.types import IndexSpec, RecordPage

_TOKEN_VERSION = 1


def scan_key(backend: str, index: str, namespace: str, filter: Filter | None) -> str:
    """What a cursor must belong to: a short digest of the scan's identity."""
    rendered = json.dumps(render_filter(filter), sort_keys=True) if filter is not None else ""
    raw = "\x1f".join((backend, index, namespace, rendered)).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def listing_key(backend: str, index: str, namespace: str, prefix: str | None,
                filter: Filter | None) -> str:
    """What a ``list_ids`` cursor must belong to: the listing's identity, prefix
    included; never equal to a scan's key, so neither kind of cursor fits the other."""
    rendered = json.dumps(render_filter(filter), sort_keys=True) if filter is not None else ""
    marked = "\x00" if prefix is None else "\x01" + prefix  # None and "" list differently
    raw = "\x1f".join(("list_ids", backend, index, namespace, marked, rendered)).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def encode_cursor(key: str, inner: str) -> str:
    payload = json.dumps({"v": _TOKEN_VERSION, "k": key, "c": inner}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_cursor(key: str, token: object, *, kind: str = "scan") -> str:
    """The adapter's own cursor inside ``token``; ``ValidationError`` for anything else
    (``kind`` names the operation in the message: ``scan`` or ``list_ids``)."""
    if not isinstance(token, str) or not token:
        raise ValidationError(f"a {kind} cursor is a non-empty str returned by an earlier page")
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationError(f"this is not a {kind} cursor returned by vectorport") from None
    if not isinstance(payload, dict) or payload.get("v") != _TOKEN_VERSION:
        raise ValidationError(f"this is not a {kind} cursor returned by vectorport")
    if payload.get("k") != key or not isinstance(payload.get("c"), str):
        what = "prefix, " if kind == "list_ids" else ""
        raise ValidationError(
            f"this cursor belongs to another {kind} (another index, namespace, {what}or filter)"
        )
    inner: str = payload["c"]
    return inner


def scan_page(
    adapter: Adapter,
    index: IndexSpec,
    namespace: str,
    *,
    filter: Filter | None,
    page_size: int,
    cursor: str | None,
) -> RecordPage:
    """One page from the adapter, natively or through id listing plus fetch; cursors
    here are the adapter's own (the facade wraps them)."""
    if isinstance(adapter, ScanningAdapter):
        try:
            return adapter.scan(index, namespace, filter=filter, page_size=page_size,
                                cursor=cursor)
        except UnsupportedFeatureError:
            if filter is None:
                raise
        # The engine cannot express this (declared) filter exactly, for example a string
        # range on Chroma: scan everything and keep what the oracle matches, so a scan
        # takes the same filters on every backend. Adapters refuse before any I/O.
        page = adapter.scan(index, namespace, filter=None, page_size=page_size, cursor=cursor)
        return RecordPage(tuple(r for r in page.records if matches(filter, r.metadata)),
                          page.next_cursor)
    if isinstance(adapter, IdListingAdapter) and adapter.capabilities.list_ids:
        # Not every backend lists ids by filter, so list them all and keep the matching
        # records with the oracle: the contract's own meaning, exact on every backend.
        ids = adapter.list_ids(index, namespace, prefix=None, filter=None,
                               limit=page_size, cursor=cursor)
        if not ids.ids:
            return RecordPage((), None)
        by_id = {r.id: r for r in adapter.fetch(index, namespace, ids.ids)}
        # A record deleted between the listing and the fetch is simply not returned.
        records = tuple(
            by_id[i] for i in ids.ids
            if i in by_id and (filter is None or matches(filter, by_id[i].metadata))
        )
        return RecordPage(records, ids.next_cursor)
    raise UnsupportedFeatureError(adapter.backend, "scan (enumerating records)")
