"""A ``chroma:///path`` folder survives a writer killed while Chroma rewrote its index.

Chroma (1.5.9, ``rust/segment/src/local_hnsw.rs``, ``persist``) saves a collection's
vector index every ``sync_threshold`` records by rewriting, in place, the segment
folder's ``data_level0.bin``/``header.bin``/``length.bin``/``link_lists.bin`` and then
``index_metadata.pickle`` (``File::create``: truncate, then buffered writes; no temporary
file, no rename). A SIGKILL inside that window leaves the pickle empty or cut short, and
every later use of the collection fails with "Error deserializing pickle file".

The records themselves are safe in ``chroma.sqlite3``: every write is first committed to
the log (``embeddings_queue``), and the vector segment's ``max_seq_id`` only moves on
*after* a persist completes. Chroma rebuilds a vector segment that has no pickle from
the log, starting at sequence 0 (``local_compaction_manager.rs``, ``BackfillMessage``:
an uninitialized segment counts as ``max_seq_id`` 0). That rebuild is exact only while
the log still holds every record, so this module:

- keeps the log: Chroma's ``automatically_purge`` (the log's own setting, the one
  ``chroma utils vacuum`` turns on) is switched off at every connect (the URL option
  ``keep_log=false`` switches it back on, Chroma's default: a smaller folder, and a
  torn index that can no longer be rebuilt);
- remembers, in ``vectorport-wal.json``, the vector segments whose log Chroma may already
  have purged (those persisted while purging was on, or before vectorport first saw the
  folder): those cannot be rebuilt exactly and are left alone (their error explains);
- at connect, under the folder's write lock (writers persist only while holding it),
  removes the pickle of any other segment whose last save was cut short (the pickle
  torn, or ``.bin`` files written after it: a kill between the two), so Chroma rebuilds
  that segment from its complete log on first use.
"""

from __future__ import annotations

import json
import logging
import os
import pickletools
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("vectorport.chroma")

DATABASE = "chroma.sqlite3"
PICKLE = "index_metadata.pickle"
MARKER = "vectorport-wal.json"


def log_setting(purge: bool) -> str:
    """Chroma's log setting, as its own ``update_legacy_embeddings_queue_config`` writes
    it."""
    return json.dumps({"automatically_purge": purge,
                       "_type": "EmbeddingsQueueConfigurationInternal"})


COMPLETE_TAIL = b"X\x0c\x00\x00\x00id_to_seq_id}u."
"""How every whole pickle Chroma 1.5.9 writes ends: its last field (``id_to_seq_id``,
always empty), ``SETITEMS``, ``STOP``. A pickle cut short cannot end so: the key's length
bytes hold NUL, which no record id may contain. Any other ending is parsed in full."""


@dataclass(frozen=True)
class TornSegment:
    """A vector segment whose last save was cut short (:func:`save_was_cut`, or its
    ``index_metadata.pickle`` not whole)."""

    segment: str
    collection: str
    rebuildable: bool
    """Whether Chroma's log still holds every record of it."""


def pickle_is_whole(path: Path) -> bool:
    """Whether the pickle at ``path`` parses to its end (without running any of it)."""
    size = path.stat().st_size
    if size == 0:
        return False
    with path.open("rb") as file:
        file.seek(max(0, size - len(COMPLETE_TAIL)))
        if file.read() == COMPLETE_TAIL:
            return True
        file.seek(0)
        try:
            for _ in pickletools.genops(file):  # stops at STOP; raises if cut short
                pass
        except ValueError:
            return False
    return True


def _connect(folder: Path) -> sqlite3.Connection:
    return sqlite3.connect(folder / DATABASE, timeout=60, isolation_level=None)


def _vector_segments(db: sqlite3.Connection) -> dict[str, str]:
    """Vector segment id → its collection's name."""
    rows = db.execute("SELECT segments.id, collections.name FROM segments JOIN collections "
                      "ON collections.id = segments.collection WHERE segments.scope = 'VECTOR'")
    return {str(segment): str(name) for segment, name in rows}


def _persisted(folder: Path, db: sqlite3.Connection, segments: dict[str, str]) -> set[str]:
    """Vector segments that have persisted at least once: the only ones whose log Chroma
    purges (it deletes below the lower of the segments' ``max_seq_id``). A pickle on disk
    counts too: older Chromas kept ``max_seq_id`` in it rather than in SQLite."""
    rows = db.execute("SELECT segments.id FROM segments JOIN max_seq_id ON "
                      "max_seq_id.segment_id = segments.id WHERE segments.scope = 'VECTOR' "
                      "AND CAST(max_seq_id.seq_id AS INTEGER) > 0")
    found = {str(segment) for (segment,) in rows}
    return found | {s for s in segments if (folder / s / PICKLE).exists()}


def _purging(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT config_json_str FROM embeddings_queue_config").fetchone()
    if row is None:  # Chroma writes its default (purging, for a new folder) on first use
        return True
    return bool(json.loads(row[0]).get("automatically_purge", True))


def _read_marker(folder: Path) -> set[str] | None:
    try:
        found = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return {str(segment) for segment in found["log_may_be_purged"]}


def _write_marker(folder: Path, segments: set[str]) -> None:
    """Replace the marker atomically and durably (temporary file, fsync, rename)."""
    text = json.dumps({"log_may_be_purged": sorted(segments)}, indent=1)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=MARKER, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, folder / MARKER)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def keep_log(folder: Path, db: sqlite3.Connection, segments: dict[str, str],
             keep: bool = True) -> set[str]:
    """Switch Chroma's log purging off (``keep``) or back to Chroma's default, on; those
    of the folder's vector ``segments`` whose log may be incomplete."""
    known = _read_marker(folder)
    if keep and known is not None and not _purging(db):
        return known
    # Purging is (or was, before vectorport saw this folder, or is asked for now): every
    # segment that persisted may have lost the start of its log. Recorded before the
    # setting changes, so a crash in between errs on the safe side.
    doubtful = (known or set()) | _persisted(folder, db, segments)
    if doubtful != known:
        _write_marker(folder, doubtful)
    if keep or not _purging(db):
        db.execute("INSERT OR REPLACE INTO embeddings_queue_config (id, config_json_str) "
                   "VALUES (1, ?)", (log_setting(purge=not keep),))
    return doubtful


INDEX_FILES = ("data_level0.bin", "header.bin", "length.bin", "link_lists.bin")
"""The files Chroma rewrites, in place, before the pickle on every save."""


def save_was_cut(folder: Path) -> bool:
    """Whether a save of the index in ``folder`` stopped between its ``.bin`` files and
    its pickle: a ``.bin`` file written after the pickle. A whole save writes the pickle
    last, so its time is never earlier; a cut one leaves the pickle of the save before,
    which does not know the points the new files hold (Chroma then fails with "Error
    finding id"), or a pickle cut short."""
    try:
        written = (folder / PICKLE).stat().st_mtime_ns
        return any((folder / name).stat().st_mtime_ns > written for name in INDEX_FILES
                   if (folder / name).exists())
    except FileNotFoundError:  # no pickle: nothing saved yet, or a rebuild under way
        return False


def torn_segments(folder: Path, segments: dict[str, str],
                  doubtful: set[str]) -> Iterator[TornSegment]:
    for segment, collection in segments.items():
        path = folder / segment / PICKLE
        if path.exists() and (save_was_cut(folder / segment) or not pickle_is_whole(path)):
            yield TornSegment(segment, collection, rebuildable=segment not in doubtful)


def recover(folder: Path, keep: bool = True) -> list[TornSegment]:
    """Keep the log (unless not ``keep``) and remove every torn pickle Chroma can
    rebuild from it; the torn segments found (the caller holds the folder's write
    lock). A folder whose tables are not Chroma 1.5's (another Chroma release) is left
    as it is, with a warning: this guard is then off, and Chroma's own behaviour holds."""
    if not (folder / DATABASE).exists():
        return []
    with closing(_connect(folder)) as db:
        try:
            segments = _vector_segments(db)
            doubtful = keep_log(folder, db, segments, keep)
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc) and "no such column" not in str(exc):
                raise
            log.warning("chroma: %s does not have the log tables of Chroma 1.5 (%s); "
                        "vectorport cannot keep Chroma's log there, so a vector index "
                        "torn by a process killed mid-write cannot be rebuilt", folder, exc)
            return []
    torn = list(torn_segments(folder, segments, doubtful))
    for found in torn:
        if found.rebuildable:
            # No pickle is Chroma's "nothing persisted yet": it replays the whole log
            # into the segment on first use, and persists it again.
            (folder / found.segment / PICKLE).unlink()
            log.warning("chroma: the vector index of collection %s in %s was torn by a "
                        "process killed mid-write; Chroma rebuilds it from its log",
                        found.collection, folder)
        else:
            log.error("chroma: the vector index of collection %s in %s was torn by a "
                      "process killed mid-write, and Chroma's log no longer holds all of "
                      "it; its vectors cannot be rebuilt (see docs/backends/chroma.md)",
                      found.collection, folder)
    return torn


__all__ = ["INDEX_FILES", "MARKER", "TornSegment", "keep_log", "log_setting",
           "pickle_is_whole", "recover", "save_was_cut", "torn_segments"]
