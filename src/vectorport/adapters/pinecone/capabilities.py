"""What the pinecone adapter declares (CONTRACT §7), and why each limit is what it is."""

from vectorport.core.capabilities import ALL_FILTER_OPERATORS, Capabilities, Limits
from vectorport.core.types import Record

MAX_ID_LENGTH = 512
"""Pinecone ids are at most 512 ASCII characters (its identifier limits)."""
MAX_RECORD_METADATA_BYTES = 40 * 1024
"""Pinecone's 40 KB of metadata per record; ours holds the document and the type
information too (see ``codec``)."""
MAX_SPARSE_VALUES = 2048
"""Non-zero values of one sparse vector Pinecone takes."""
MAX_FILTER_TERMS = 10_000
"""Pinecone takes at most 10,000 values in the lists of one filter ($in, $nin)."""


def stored_id_length(rid: str) -> int:
    """The length of ``rid`` as Pinecone stores it: ``codec.encode_id`` writes every
    character from ``~`` (0x7E) up as ``~`` and six hex digits. (The facade measures
    every id of an upsert with this: the common id, ASCII without either character,
    is its own length.)"""
    if rid.isascii() and "~" not in rid and "\x7f" not in rid:
        return len(rid)
    return sum(1 if ord(c) < 0x7E else 7 for c in rid)


def stored_metadata_bytes(record: Record) -> int:
    """The bytes of the metadata Pinecone receives for ``record``: user metadata, the
    document and the reserved type keys, counted with every layout's type keys at once
    (the check runs before the index, hence its layout, is known; the bound exceeds the
    exact size by the markers one layout has and the other lacks, a few bytes per
    number). Imported here lazily: the codec needs the SDK, the declaration must not."""
    from vectorport.adapters.pinecone.codec import stored_bytes_bound

    return stored_bytes_bound(record.metadata, record.document)


def stored_metadata_bound(metadata_json: int, document_chars: int) -> int:
    """At least :func:`stored_metadata_bytes` of any record whose metadata takes at most
    ``metadata_json`` bytes as compact JSON and whose document at most
    ``document_chars`` characters, so that the facade can pass a whole upsert without
    measuring each record. A number's key is listed twice in the reserved keys
    (``vp:num``, and ``vp:int`` with its decimal or ``vp:flt``): at most twice the bytes
    of its own entry ``"key":value``; the three lists add their brackets; a document is
    sent as a JSON string, at most 6 bytes a character (a ``\\uXXXX`` escape), under
    ``"vp:doc"``. Doubled again for margin (the measure of the metadata may be another
    JSON writer's): the bound only has to be far below 40 KB for common records."""
    reserved = 2 * metadata_json + 3 * len(',"vp:num":[]')
    document = len(',"vp:doc":""') + 6 * document_chars  # (counted even without one)
    return 2 * (metadata_json + reserved + document)


PINECONE_LIMITS = Limits(
    max_id_bytes=MAX_ID_LENGTH,
    id_size=stored_id_length,
    allow_zero_vector=False,  # Pinecone refuses a dense vector without a non-zero value
    max_sparse_entries=MAX_SPARSE_VALUES,
    record_size=stored_metadata_bytes,
    max_record_bytes=MAX_RECORD_METADATA_BYTES,
    record_size_bound=stored_metadata_bound,
    max_filter_terms=MAX_FILTER_TERMS,
)

PINECONE_CAPABILITIES = Capabilities(
    # Every operator compiles, a few shapes excepted (string ranges, numbers beyond 2^53:
    # see filters.py), which raise UnsupportedFeatureError at compile time.
    filter_operators=ALL_FILTER_OPERATORS,
    sparse=True,  # on dotproduct indexes only; create_index refuses the other metrics
    hybrid="sum",  # Pinecone scores dense + sparse natively
    hints=frozenset(),  # Pinecone has no per-query ef / probes
    consistency=frozenset({"strong", "eventual"}),  # strong: bounded wait on the LSN
    index_types=frozenset({"auto"}),
    documents=True,  # under a reserved metadata key
    patch=False,  # Pinecone's update cannot remove metadata keys: no exact native patch
    list_ids=True,  # native listing by prefix, in id order (without a filter)
    max_dimension=20_000,
    max_top_k=10_000,
    max_batch_size=1_000,  # records per upsert request; the adapter also splits by size
    # Pinecone holds 40 KB per record; 4 KB stay for the document's and the type
    # information's reserved keys (the adapter checks the total before sending).
    max_metadata_bytes=36 * 1024,
    write_concurrency=4,
    limits=PINECONE_LIMITS,
)
