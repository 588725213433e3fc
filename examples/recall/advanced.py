"""Advanced usage (Mastra's second example): SQL storage, a durable vector store, a
threshold, an asymmetric message range, and one processor on both sides of an agent.

    const semanticRecall = new SemanticRecall({ storage, vector, embedder, topK: 5,
      messageRange: { before: 2, after: 1 }, scope: 'resource', threshold: 0.7 })
    new Agent({ inputProcessors: [semanticRecall, ...], outputProcessors: [semanticRecall, ...] })

Mastra's example keeps both in PostgreSQL. Here: ``PostgresStorage(DATABASE_URL)`` when that
variable is set, else ``SQLiteStorage`` in a temporary file; the vectors go to a
``local://`` store in the same temporary folder (any vectorport URL works, pgvector
included). The "model" is a stub that answers from the recalled context.

Run: python examples/recall/advanced.py
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from _chat import show, turn

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.recall import Message, PostgresStorage, SemanticRecall, SQLiteStorage

folder = Path(tempfile.mkdtemp(prefix="recall-example-"))
database_url = os.environ.get("DATABASE_URL")
storage = PostgresStorage(database_url) if database_url else SQLiteStorage(folder / "memory.db")
vector = vectorport.connect(f"local://{folder / 'vectors.db'}")

semantic_recall = SemanticRecall(
    storage=storage,
    vector=vector,
    embedder=HashingEmbedder(),
    top_k=5,
    message_range={"before": 2, "after": 1},
    scope="resource",
    threshold=0.7,
)


class Agent:
    """Just enough of an agent: input processors, a model, output processors."""

    def __init__(self, input_processors: Sequence[SemanticRecall],
                 output_processors: Sequence[SemanticRecall]) -> None:
        self.input_processors = input_processors
        self.output_processors = output_processors

    def model(self, messages: Sequence[Message]) -> str:
        remembered = [m for m in messages if m.source == "memory"]
        if not messages[-1].content.endswith("?"):
            return "Noted."
        if any("flat white" in m.content for m in remembered):
            return "You like a flat white."
        return "I don't know yet."

    def generate(self, text: str, *, minutes: int, thread_id: str, resource_id: str) -> str:
        ids = {"thread_id": thread_id, "resource_id": resource_id}
        messages: list[Any] = [turn("user", text, minutes)]
        for processor in self.input_processors:
            messages = processor.process_input(messages, **ids)
        answer = self.model(messages)
        show(messages)
        print(f"  -> assistant: {answer}")
        question = messages[-1]
        reply = Message(role="assistant", content=answer,
                        created_at=question.created_at + timedelta(seconds=5))
        for processor in self.output_processors:
            processor.process_output([question, reply], **ids)
        return answer


agent = Agent(input_processors=[semantic_recall], output_processors=[semantic_recall])

print("monday, thread 'breakfast':")
agent.generate("My favourite coffee order is a flat white.",
               minutes=0, thread_id="breakfast", resource_id="bob")
agent.generate("Also, I cannot stand burnt toast.", minutes=2, thread_id="breakfast",
               resource_id="bob")
print("tuesday, thread 'errands':")
answer = agent.generate("What is my favourite coffee order?", minutes=60 * 24,
                        thread_id="errands", resource_id="bob")
assert answer == "You like a flat white."
print("wednesday, another user:")
answer = agent.generate("What is my favourite coffee order?", minutes=2 * 60 * 24,
                        thread_id="hello", resource_id="carol")
assert answer == "I don't know yet."  # carol never sees bob's conversations

print("messages stored in 'breakfast':", len(storage.list_messages("breakfast")))
index_name = semantic_recall.index_name
assert index_name is not None
print("vector index:", index_name, "with", vector.index(index_name).count(), "messages")
storage.close()
vector.close()
shutil.rmtree(folder)
print("ok")
