"""The reference's tables say what the code does: every keyword of the Python API's
methods (docs/python-api.md) and every argument of the MCP tools (docs/mcp.md,
"Tools") appears in its row, and every row names a method or tool that exists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from memory_core import Falsify

DOCS = Path(__file__).resolve().parents[2] / "docs"


def table_after(page: str, heading: str, first_column: str) -> list[list[str]]:
    """The rows (cells) of the first table after ``heading`` in ``docs/page`` whose header starts
    with ``first_column``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    text = text[text.index(heading) :]
    text = text[text.index(f"| {first_column} |") :]
    rows = []
    for line in text.splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def names_in(params: str) -> set[str]:
    """``a, *, b=1, c`` -> {a, b, c}."""
    return {m.group(1) for part in params.split(",") for m in [re.match(r"\s*([A-Za-z_]\w*)", part)] if m}


def test_python_api_table_matches_the_signatures():
    rows = table_after("python-api.md", "# Use it from Python", "method")
    documented = {}
    for cell, _ in rows:
        for call in re.findall(r"`(?:Falsify\.)?(\w+)\(([^`]*)\)`", cell):
            documented[call[0]] = names_in(call[1])
    for name in (
        "open",
        "attach",
        "load",
        "revise",
        "revise_many",
        "resolve",
        "recall",
        "search",
        "status",
        "explain",
        "undo",
        "check",
    ):
        assert name in documented, f"docs/python-api.md's table lacks {name}"
    for name, params in documented.items():
        method = getattr(Falsify, name)
        real = {p for p in inspect.signature(method).parameters if p not in ("self", "cls")}
        # internal knobs (purpose, lock-free reading, the CLI's pin reason and progress callbacks) may stay unlisted
        internal = {"purpose", "pin_reason", "what", "on_result"}
        assert params <= real, f"{name}: docs/python-api.md names {params - real}, not in the signature"
        assert real - internal <= params, (
            f"{name}: docs/python-api.md's row lacks {sorted(real - internal - params)}"
        )


def test_mcp_tool_table_matches_the_tools():
    from memory_core.session import Gate
    from memory_core.mcp.server import build_server

    server = build_server(Gate(lambda: None))
    tools = {
        tool.name: set(tool.parameters.get("properties", {})) for tool in server._tool_manager.list_tools()
    }
    rows = {row[0].strip("`"): row[1] for row in table_after("mcp.md", "**Tools**", "tool")}
    assert set(rows) == set(tools)
    for name, params in tools.items():
        listed = set(re.findall(r"`(\w+)`", rows[name]))
        assert params <= listed, f"MCP tool {name}: docs/mcp.md's row lacks {sorted(params - listed)}"
