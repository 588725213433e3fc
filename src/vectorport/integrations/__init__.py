"""Bridges that put vectorport behind the vector-store interfaces of LangChain,
LlamaIndex and Haystack, so an application keeps its framework and gains vectorport's
filters, exact scores and backend portability.

Each bridge lives in its own module and imports its framework only there
(``vectorport[langchain]``, ``vectorport[llama-index]``, ``vectorport[haystack]``);
importing this package pulls in none of them.
"""
