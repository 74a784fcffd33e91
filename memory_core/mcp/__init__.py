"""FALSIFY over the Model Context Protocol (official ``mcp`` SDK).

:mod:`memory_core.mcp.gate` holds the one opened facade a long-lived process
shares (one call at a time, changes announced); :mod:`memory_core.mcp.server`
builds the MCP server (tools ``add_beliefs``, ``revise``, ``recall``, ``search``,
``status``, ``explain``, ``undo``, ``check``; resources ``falsify://graph`` and
``falsify://log``) and serves it over stdio (``python main.py mcp``).
"""
