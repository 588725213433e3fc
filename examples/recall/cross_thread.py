"""Recall across threads (Mastra's "Rappel entre plusieurs fils").

With ``scope="resource"``, messages from the user's other conversations come back as
ONE system message, each conversation labelled with its title and every line with its
time, so the model can tell where and when something was said. Messages of the current
thread come back as themselves, tagged ``source="memory"``.

Run: python examples/recall/cross_thread.py
"""

from _chat import at, show, turn

import vectorport
from vectorport.recall import SemanticRecall, SQLiteStorage, Thread

storage = SQLiteStorage()  # in memory; pass a file path to keep it
recall = SemanticRecall(storage=storage, vector=vectorport.connect("memory://"),
                        top_k=3, message_range=1, scope="resource")

storage.save_thread(Thread("kitchen", "dana", title="Kitchen renovation", created_at=at(0)))
recall.process_output([
    turn("user", "The kitchen tiles should be dark green.", 0),
    turn("assistant", "Dark green tiles it is. Matte or glossy?", 1),
    turn("user", "Matte tiles, please.", 2),
], thread_id="kitchen", resource_id="dana")
recall.process_output([
    turn("user", "Book the plumber for Friday.", 30),
    turn("assistant", "The plumber is booked for Friday at 10.", 31),
], thread_id="today", resource_id="dana")

messages = recall.process_input([turn("user", "Which colour did I pick for the kitchen tiles?", 60)],
                                thread_id="today", resource_id="dana")
show(messages)
system = messages[0]
assert system.role == "system" and system.source == "memory"
assert 'Conversation "Kitchen renovation" (thread kitchen), from 2024-05-01 09:00 UTC:' in system.content
assert "[2024-05-01 09:00 UTC] user: The kitchen tiles should be dark green." in system.content
assert sum(m.role == "system" for m in messages) == 1
print("ok")
