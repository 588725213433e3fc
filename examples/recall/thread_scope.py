"""``scope="thread"``: recall only from the current conversation.

The scope is a vectorport filter on the ``thread_id`` (and ``resource_id``) metadata of
the stored vectors, so the store itself never returns another thread's message, on
every backend; ``message_range`` then adds the neighbours of each match.

Run: python examples/recall/thread_scope.py
"""

from _chat import show, turn

import vectorport
from vectorport.recall import SemanticRecall

recall = SemanticRecall(vector=vectorport.connect("memory://"), top_k=1,
                        message_range={"before": 1, "after": 1}, scope="thread")

recall.process_output([
    turn("user", "Let's talk about the quarterly report.", 0),
    turn("assistant", "Sure. Revenue grew by 12 percent.", 1),
    turn("user", "The marketing budget is 40 thousand euros.", 2),
    turn("assistant", "Noted: 40 thousand euros for marketing.", 3),
    turn("user", "Next, the hiring plan.", 4),
], thread_id="q3-review", resource_id="acme")
recall.process_output([
    turn("user", "The marketing budget is 90 thousand euros.", 10),
], thread_id="draft-ideas", resource_id="acme")

messages = recall.process_input([turn("user", "How big is the marketing budget?", 20)],
                                thread_id="q3-review", resource_id="acme")
show(messages)
recalled = [m.content for m in messages if m.source == "memory"]
assert recalled == ["Sure. Revenue grew by 12 percent.",
                    "The marketing budget is 40 thousand euros.",
                    "Noted: 40 thousand euros for marketing."]
assert not any("90 thousand" in m.content for m in messages)  # the other thread never shows
print("ok")
