"""An agent loop around the query tool, with a scripted model instead of an LLM.

The loop is the one you would write for any OpenAI-style chat API: send the messages
and the tool definitions, run every tool call the model makes, append the results as
``tool`` messages, repeat until the model answers in text. ``ScriptedModel`` plays the
model offline: it picks the tool, writes the arguments (a filter when the question asks
for one), fixes its arguments after an error, and answers from the tool's output.

Run: python examples/query_tool/agent_loop.py
"""

from __future__ import annotations

import json
import re
from typing import Any

from _corpus import EMBEDDER, knowledge_base

import vectorport
from vectorport.agent import RequestContext, create_vector_query_tool


class ScriptedModel:
    """Answers like a function-calling chat model would, without a network."""

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1]
        tool_name = tools[0]["function"]["name"]
        if last["role"] == "user":
            question = last["content"]
            arguments: dict[str, Any] = {"query_text": question, "top_k": 0 if "quick" in
                                         question else 3}  # top_k 0: a mistake, on purpose
            match = re.search(r"version (?:above|greater than) ([\d.]+)", question)
            if match:
                arguments["filter"] = {"version": {"$gt": float(match.group(1))}}
            return self._call(tool_name, arguments)
        if last["role"] == "tool":
            output = json.loads(last["content"])
            if "error" in output:  # read the error, fix the arguments, try again
                previous = json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])
                previous["top_k"] = 3
                return self._call(tool_name, previous)
            best = output["sources"][0]
            return {"role": "assistant",
                    "content": f"{best['document']} (source: {best['id']})"}
        raise AssertionError("unexpected conversation state")

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{self.calls}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }]}


def run_agent(question: str, model: ScriptedModel, tool: Any, context: RequestContext) -> str:
    tools = [tool.to_openai_tool()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = model.chat(messages, tools)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return str(reply["content"])
        for call in reply["tool_calls"]:
            print(f"  tool call {call['function']['name']}({call['function']['arguments']})")
            try:
                content = tool.execute(call["function"]["arguments"], context).to_json()
            except vectorport.ValidationError as exc:  # tell the model, let it retry
                content = json.dumps({"error": str(exc)})
                print(f"  tool error: {exc}")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    raise RuntimeError("the model did not answer within 5 turns")


store = knowledge_base()
query_tool = create_vector_query_tool(vector_store=store, index_name="docs", model=EMBEDDER,
                                      enable_filter=True, max_top_k=20)
context = RequestContext(tenant_id="demo")
model = ScriptedModel()

for question in (
    "How do I create an index?",
    "quick: how are tenants isolated?",
    "Which search features exist in version above 2.6?",
):
    print("user:", question)
    answer = run_agent(question, model, query_tool, context)
    print("assistant:", answer)

assert model.calls == 4  # one retry after the top_k mistake
print("ok")
