"""The agent tools served over the Model Context Protocol (``pip install ".[mcp]"``).

``vectorport mcp URL --index NAME`` serves, through the official ``mcp`` SDK, the vector
query tool of each index (its filter described with the index's fields and their kinds),
``navigate``/``read``/``get_chunk``/``grep`` where the index is navigable, and
``workspace_search`` for ``--workspace PATH``, over stdio or streamable HTTP. See
``docs/mcp.md``.

:mod:`vectorport.mcp.tools`, :mod:`~vectorport.mcp.chunk_tools` and
:mod:`~vectorport.mcp.config` do not need the SDK; :mod:`vectorport.mcp.server` does.
"""

from vectorport.mcp.config import Scope, ServerConfig
from vectorport.mcp.tools import QueryToolDef, ToolDef

__all__ = ["QueryToolDef", "Scope", "ServerConfig", "ToolDef"]
