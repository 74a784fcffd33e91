"""The layers of memory_core/ and the direction of their imports.

Each module belongs to the layer of its folder; a module may import from its
own layer and the layers below it, never from a layer above. Only the store
layer imports cognee (and the engines under it). Every import counts, also
those inside functions (read from the source with ``ast``, nothing imported).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memory_core"

# lowest first; the top-level modules memory_core/__init__.py, api.py and results.py are the "api" layer
LAYERS = ["core", "store", "judging", "tasks", "ops", "api", "mcp", "web", "shell"]
ENGINE_PACKAGES = ("cognee", "ladybug", "lancedb", "kuzu", "litellm", "asyncpg", "psycopg2")
STORE_ONLY = "store"


def layer_of(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "memory_core", module
    if len(parts) == 1 or parts[1] in ("api", "results", "__init__"):
        return "api"
    return parts[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            if target in ("memory_core",) + tuple(f"memory_core.{l}" for l in LAYERS):
                # `from memory_core.store import writer`: the submodule is what is imported
                found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return found


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "_model_files" not in p.parts)


def test_every_module_has_a_known_layer():
    for path in modules():
        assert layer_of(module_name(path)) in LAYERS, f"{path}: folder is not a known layer {LAYERS}"


def violations() -> list[str]:
    bad = []
    for path in modules():
        me = module_name(path)
        mine = LAYERS.index(layer_of(me))
        for line, target in imports_of(path):
            top = target.split(".")[0]
            if top in ENGINE_PACKAGES and layer_of(me) != STORE_ONLY:
                bad.append(f"{me}:{line} imports {target} (only the store layer imports cognee and its engines)")
            if top == "memory_core" and target != "memory_core":
                theirs = LAYERS.index(layer_of(target))
                if theirs > mine and not (layer_of(target) == "api" and target == "memory_core"):
                    bad.append(f"{me}:{line} ({LAYERS[mine]}) imports {target} ({LAYERS[theirs]}, a layer above)")
    return bad


def test_imports_point_down_only():
    assert violations() == []


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The test above can fail: a core module importing the CLI is reported."""
    fake = PACKAGE / "core" / "_layer_probe.py"
    fake.write_text("def f():\n    from memory_core.shell import cli\n    import cognee\n")
    try:
        found = violations()
    finally:
        fake.unlink()
    assert any("memory_core.core._layer_probe" in v and "shell" in v for v in found), found
    assert any("memory_core.core._layer_probe" in v and "cognee" in v for v in found), found
