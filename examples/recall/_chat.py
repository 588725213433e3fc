"""Shared bits of the recall examples: a fixed clock and a printer.

Messages get explicit times, so the printed output is the same on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from vectorport.recall import Message

START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    """``minutes`` after the start of the story."""
    return START + timedelta(minutes=minutes)


def turn(role: str, content: str, minutes: int, **ids: str) -> dict[str, object]:
    return {"role": role, "content": content, "created_at": at(minutes), **ids}


def show(messages: Sequence[Message]) -> None:
    for m in messages:
        tag = f"[{m.source}]" if m.source else "[input]"
        first, *rest = m.content.splitlines()
        print(f"  {tag:9} {m.role:9} {first}")
        for line in rest:
            print(f"  {'':9} {'':9} {line}")
