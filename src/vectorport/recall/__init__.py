"""Semantic recall for conversations: :class:`SemanticRecall` and message storages.

>>> from vectorport.recall import SemanticRecall
>>> recall = SemanticRecall(scope="thread", top_k=1, message_range=0)
>>> _ = recall.process_output([
...     {"role": "user", "content": "My cat is called Miso"},
...     {"role": "user", "content": "The weather is nice today"},
... ], thread_id="t1", resource_id="alice")
>>> out = recall.process_input([{"role": "user", "content": "What is my cat called?"}],
...                            thread_id="t1", resource_id="alice")
>>> [(m.source, m.content) for m in out]
[('memory', 'My cat is called Miso'), (None, 'What is my cat called?')]

See ``docs/recall.md``.
"""

from vectorport.recall.formatting import other_threads_message
from vectorport.recall.messages import MEMORY_SOURCE, Message, Role, Thread, as_message, text_of
from vectorport.recall.options import MessageRange, Scope, default_index_name
from vectorport.recall.processor import SemanticRecall
from vectorport.recall.sql import PostgresStorage, SQLiteStorage, SQLStorage
from vectorport.recall.storage import InMemoryStorage, MessageStorage

__all__ = [
    "MEMORY_SOURCE",
    "InMemoryStorage",
    "Message",
    "MessageRange",
    "MessageStorage",
    "PostgresStorage",
    "Role",
    "SQLStorage",
    "SQLiteStorage",
    "Scope",
    "SemanticRecall",
    "Thread",
    "as_message",
    "default_index_name",
    "other_threads_message",
    "text_of",
]
