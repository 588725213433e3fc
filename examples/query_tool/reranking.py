"""Reranking results (Mastra's "Example with Reranking").

The reranker combines a semantic relevance score (from an LLM, wrapped by
``LLMScorer``), the vector similarity and the original position, with weights that sum
to 1, and keeps the best ``top_k``. The "LLM" here is a tiny offline function that
answers with a number, as a real model prompted by ``LLMScorer`` would.

Run: python examples/query_tool/reranking.py
"""

import re

from _corpus import EMBEDDER, knowledge_base

from vectorport.agent import LLMScorer, Reranker, create_vector_query_tool


def tiny_llm(prompt: str) -> str:
    """Stands in for a chat model: rates the share of query words found in the passage."""
    query = re.search(r"Query: (.*)", prompt).group(1)  # type: ignore[union-attr]
    passage = re.search(r"Passage: (.*)", prompt).group(1)  # type: ignore[union-attr]
    wanted = set(re.findall(r"\w+", query.lower()))
    found = wanted & set(re.findall(r"\w+", passage.lower()))
    return f"{len(found) / len(wanted):.2f}"


store = knowledge_base()
plain = create_vector_query_tool(vector_store=store, index_name="docs", model=EMBEDDER)
reranked = create_vector_query_tool(
    vector_store=store,
    index_name="docs",
    model=EMBEDDER,
    reranker=Reranker(
        scorer=LLMScorer(tiny_llm),
        weights={"semantic": 0.5, "vector": 0.3, "position": 0.2},
        top_k=5,
    ),
)

question = {"query_text": "how to isolate tenants", "top_k": 7}
vector_order = [s.id for s in plain.execute(question).sources]
print("vector order:  ", vector_order)
result = reranked.execute(question)
print("reranked (top 5):")
for source in result.sources:
    r = source.rerank
    assert r is not None
    print(f"  {source.id:<13} total={r.total:.3f} semantic={r.semantic:.2f} "
          f"vector={r.vector:.3f} position={r.position:.2f}")
assert len(result.sources) == 5
assert result.sources[0].id == "namespaces"
assert [s.id for s in result.sources] != vector_order[:5]  # the LLM's view moved some up
print("ok")
