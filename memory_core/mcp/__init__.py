"""FALSIFY over the Model Context Protocol (official ``mcp`` SDK).

The tools reach the data root through the process's one gate
(:mod:`memory_core.session`: one session at a time, changes announced);
:mod:`memory_core.mcp.server` builds the MCP server (tools ``add_beliefs``, ``revise``, ``recall``, ``search``,
``status``, ``explain``, ``undo``, ``check``; resources ``falsify://graph`` and
``falsify://log``) and serves it over stdio (``python main.py mcp``).
"""
