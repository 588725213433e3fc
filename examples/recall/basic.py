"""Basic usage (Mastra's first example): a SemanticRecall processor.

    const processor = new SemanticRecall({ storage: memoryStorage, vector: vectorStore,
      embedder: openai.embedding('text-embedding-3-small'), topK: 5, messageRange: 2,
      scope: 'resource' })

Here the storage is the in-process one, the vector store the embedded ``memory://``
store and the embedder the offline hashing embedder; swap in ``SQLiteStorage``, any
``vectorport.connect(url)`` store and a real model without changing anything else.

Run: python examples/recall/basic.py
"""

from _chat import show, turn

import vectorport
from vectorport.embedders import HashingEmbedder
from vectorport.recall import InMemoryStorage, SemanticRecall

memory_storage = InMemoryStorage()
vector_store = vectorport.connect("memory://")

processor = SemanticRecall(
    storage=memory_storage,
    vector=vector_store,
    embedder=HashingEmbedder(),
    top_k=5,
    message_range=2,
    scope="resource",
)
print("processor:", processor.id, "/", processor.name)

# Yesterday's conversation of user "alice", stored by the output side.
processor.process_output([
    turn("user", "I am planning a trip to Lisbon in June.", 0),
    turn("assistant", "Lovely! Do you need a hotel?", 1),
    turn("user", "Yes. My favourite coffee order is a flat white, find a hotel near a good cafe.", 2),
    turn("assistant", "The Hotel Avenida is next to a cafe known for its flat white.", 3),
], thread_id="trip-planning", resource_id="alice")
print("index:", processor.index_name)

# Today, in a new thread: the input side recalls what matters.
messages = processor.process_input(
    [turn("user", "What is my favourite coffee order?", 60 * 24)],
    thread_id="today", resource_id="alice",
)
show(messages)
assert messages[0].role == "system" and messages[0].source == "memory"
assert "flat white" in messages[0].content
assert messages[-1].content == "What is my favourite coffee order?"
print("ok")
