"""``vectorport copy``, ``verify``, ``export`` and ``import``."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any
from urllib.parse import urlsplit

from vectorport.core.errors import ValidationError
from vectorport.core.store import Index, Store, connect
from vectorport.transfer.copying import DEFAULT_BATCH_SIZE


def split_index_url(url: str, index: str | None) -> tuple[str, str]:
    """``scheme://…/path/INDEX?query`` → (store URL, index name); ``--index`` wins.

    The index is the last path segment: ``local:///data/store.db/docs``,
    ``pgvector://me@/app/docs?host=/run/pg``, ``pinecone:///docs?api_key_env=KEY``.
    """
    if index:
        return url, index
    parts = urlsplit(url)
    head, _, last = parts.path.rstrip("/").rpartition("/")
    if not last:
        raise ValidationError(f"no index name in {parts.scheme}://…: end the URL's path with "
                              "/INDEX or pass --index")
    # composed by hand: urlunsplit drops the '//' of 'local:///path' (an empty host)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{head}{query}", last


def _open(url: str, index: str | None, *, must_exist: bool) -> tuple[Store, str]:
    store_url, name = split_index_url(url, index)
    store = connect(store_url)
    if must_exist:
        store.describe_index(name)  # IndexNotFoundError now, before anything else
    return store, name


def _source(args: argparse.Namespace) -> tuple[Store, Index]:
    store, name = _open(args.source, args.index, must_exist=True)
    return store, store.index(name)


def cmd_copy(args: argparse.Namespace) -> int:
    from vectorport.transfer.copying import copy_index
    from vectorport.transfer.plan import plan_copy

    src_store, source = _source(args)
    dst_store, dst_name = _open(args.destination, args.to_index or args.index, must_exist=False)
    with src_store, dst_store:
        if args.dry_run:
            plan = plan_copy(source, dst_store, destination_name=dst_name,
                             namespaces=args.namespace)
            print(plan.describe())
            return 1 if plan.problems else 0
        report = copy_index(
            source, dst_store, destination_name=dst_name, namespaces=args.namespace,
            batch_size=args.batch_size, workers=args.workers, checkpoint=args.checkpoint,
            restart=args.restart, verify=args.verify, progress=not args.quiet,
            precheck_records="full" if args.full_precheck else True,
        )
        print(report.plan.describe())
        resumed = " (resumed from a checkpoint)" if report.resumed else ""
        print(f"copied {sum(report.written.values())} records in {report.seconds:.1f} s, "
              f"{report.records_per_second:,.0f} records/s{resumed}")
        if report.verification is not None:
            print(report.verification.describe())
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from vectorport.transfer.verify import verify_indexes

    src_store, source = _source(args)
    dst_store, dst_name = _open(args.destination, args.to_index or args.index, must_exist=True)
    with src_store, dst_store:
        report = verify_indexes(source, dst_store.index(dst_name), namespaces=args.namespace,
                                sample_queries=args.queries, top_k=args.top_k)
        print(report.describe())
        return 0 if report.ok else 1


def cmd_export(args: argparse.Namespace) -> int:
    from vectorport.transfer.exporting import export_index

    store, index = _source(args)
    with store:
        report = export_index(index, args.path, namespaces=args.namespace,
                              batch_size=args.batch_size, progress=not args.quiet)
    total = sum(report.records.values())
    print(f"exported {total} records of {index.name!r} in {len(report.records)} namespace(s) "
          f"to {report.path} ({len(report.files)} file(s), {report.seconds:.1f} s)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from vectorport.transfer.exporting import import_index

    store_url, name = (args.destination, args.index) if args.index else split_index_url(
        args.destination, None)
    with connect(store_url) as store:
        report = import_index(args.path, store, index_name=name, batch_size=args.batch_size,
                              workers=args.workers, checkpoint=args.checkpoint,
                              restart=args.restart, verify=args.verify,
                              progress=not args.quiet)
    resumed = " (resumed from a checkpoint)" if report.resumed else ""
    print(f"imported {report.records} records into {report.index!r} in {report.seconds:.1f} s"
          f"{resumed}")
    for check in report.namespaces:
        print(f"  {check.namespace or '(default)'}: {check.destination_count} records, "
              f"{'same as the files' if check.same else 'DIFFERENT from the files'}")
    return 0


def _common(p: argparse.ArgumentParser, *, writes: bool) -> None:
    p.add_argument("--namespace", action="append", default=None, metavar="NS",
                   help="a namespace to include (repeat for several; default: all; '' is "
                        "the default namespace)")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                   help=f"records per page (default {DEFAULT_BATCH_SIZE})")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    if writes:
        p.add_argument("--workers", type=int, default=2,
                       help="pages written at once (default 2)")
        p.add_argument("--checkpoint", default=None,
                       help="checkpoint file (default: under ~/.local/state/vectorport)")
        p.add_argument("--restart", action="store_true",
                       help="ignore an earlier checkpoint and start over")
        p.add_argument("--no-verify", dest="verify", action="store_false",
                       help="skip the verification at the end (on by default: it reads the "
                            "destination back once and compares sample queries)")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("copy", help="copy an index to another store (resumable, verified)",
                       description="Copy SRC to DST: URLs ending in /INDEX, or --index. "
                       "Killed and started again with the same command, it resumes.")
    p.add_argument("source", metavar="SRC", help="a store URL ending in /INDEX (or pass --index)")
    p.add_argument("destination", metavar="DST",
                   help="a store URL ending in /INDEX (or pass --to-index or --index)")
    p.add_argument("--index", default=None, help="index name on both sides")
    p.add_argument("--to-index", default=None, help="another name for the destination index")
    p.add_argument("--dry-run", action="store_true", help="print the plan and write nothing")
    p.add_argument("--full-precheck", action="store_true",
                   help="before writing, put every source record through the destination's "
                        "whole validation, not only its rules tighter than the source's (for "
                        "a source written by other tools than vectorport)")
    _common(p, writes=True)
    p.set_defaults(func=cmd_copy)

    p = sub.add_parser("verify", help="compare two indexes: counts, checksums, sample queries")
    p.add_argument("source", metavar="SRC", help="a store URL ending in /INDEX (or pass --index)")
    p.add_argument("destination", metavar="DST",
                   help="a store URL ending in /INDEX (or pass --to-index or --index)")
    p.add_argument("--index", default=None, help="index name on both sides")
    p.add_argument("--to-index", default=None, help="another name for the destination index")
    p.add_argument("--queries", type=int, default=20, help="sample queries (default 20)")
    p.add_argument("--top-k", type=int, default=10,
                   help="results each sample query compares")
    _common(p, writes=False)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("export", help="write an index to Parquet files (see docs/copy.md)")
    p.add_argument("source", metavar="URL", help="a store URL ending in /INDEX (or pass --index)")
    p.add_argument("path", metavar="PATH", help="a new folder, or a file ending in .parquet")
    p.add_argument("--index", default=None, help="the index's name (URL is then the store's URL "
                                                 "as it is)")
    _common(p, writes=False)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="load an export into a store (resumable, verified)")
    p.add_argument("path", metavar="PATH", help="what export wrote: a folder or a .parquet file")
    p.add_argument("destination", metavar="URL",
                   help="a store URL ending in /INDEX (or pass --index)")
    p.add_argument("--index", default=None,
                   help="index name (default: the URL's last path segment, else the exported name)")
    _common(p, writes=True)
    p.set_defaults(func=cmd_import)


def configure_logging() -> None:
    """Progress lines go to the log when stderr is not a terminal."""
    if not sys.stderr.isatty():
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
