"""The layers of memory_core/, the direction of their imports, and no import cycles.

Each module belongs to the layer of its folder; a module may import from its
own layer and the layers below it, never from a layer above. Every import counts,
also those inside functions (read from the source with ``ast``, nothing imported).

Only the store layer imports cognee and the engines under it, and besides it exactly
two judging modules: ``memory_core.judging.llm`` (the LLM client: cognee's
``LLMGateway`` and litellm, with the timeout and the budget around them) and
``memory_core.judging.verdict_cache`` (the verdicts remembered by the judge's own key,
on cognee's cache). They are the judge's connection to its model, as a driver is the
store's connection to its database: beside the store, not inside it, so the store
layer holds what is stored and the judging layer everything a verdict needs.

No two modules import each other, directly or through others: the import graph of
every module (an edge per import; ``from memory_core.store import writer`` imports the
submodule ``memory_core.store.writer``, ``from memory_core.store import X`` of anything
else imports the package's ``__init__``) has no cycle. A cycle is reported as a chain of
files, each with the line of its import of the next.
"""

from __future__ import annotations

import ast
import shutil
from collections import deque
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "memory_core"

# lowest first; the top-level modules memory_core/__init__.py, api.py and results.py are the "api" layer;
# memory_core/session.py (the gate and its typed session: the facade lent to the shells one caller at a time)
# is the "session" layer between the API and every shell
LAYERS = ["core", "store", "judging", "tasks", "ops", "api", "session", "mcp", "web", "shell"]
ENGINE_PACKAGES = ("cognee", "ladybug", "lancedb", "kuzu", "litellm", "asyncpg", "psycopg2")
STORE_ONLY = "store"
# the judge's LLM client and its verdict cache: the engine users outside the store layer (see above)
ENGINE_USERS_BESIDE_THE_STORE = frozenset({"memory_core.judging.llm", "memory_core.judging.verdict_cache"})


def layer_of(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "memory_core", module
    if len(parts) == 1 or parts[1] in ("api", "results", "__init__"):
        return "api"
    return parts[1]


def module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "_model_files" not in p.parts)


def imports_of(path: Path, package: Path = PACKAGE, known: frozenset = frozenset()) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the file at ``path``. A name imported
    from a package (``from memory_core.store import writer``) is the submodule when
    ``known`` (the package's module names) has one of that name, else the package itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    me = module_name(path, package)
    here = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            found += [(node.lineno, s) for s in submodules]
            if len(submodules) < len(node.names):  # names defined in the module (or package) itself
                found.append((node.lineno, target))
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, list[int]]]:
    """module -> {module of this package it imports: the lines of those imports}."""
    paths = {module_name(p, package): p for p in modules(package)}
    known = frozenset(paths)
    graph: dict[str, dict[str, list[int]]] = {}
    for me, path in paths.items():
        edges = graph.setdefault(me, {})
        for line, target in imports_of(path, package, known):
            while target and target not in known and "." in target:
                target = target.rpartition(".")[0]  # `import memory_core.store.writer.X`: the module
            if target in known:
                edges.setdefault(target, []).append(line)
    return graph


def strongly_connected(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the strongly connected components of ``graph``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def cycles(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """Cycles naming every import that closes one: for each import a -> b inside a strongly
    connected component, a -> b and the shortest way back from b to a (each cycle once)."""
    found: dict[tuple[str, ...], list[str]] = {}
    for component in strongly_connected(graph):
        members = set(component)
        for a in component:
            for b in sorted(graph[a]):
                if b not in members:
                    continue
                way = _shortest(graph, b, a, members)
                cycle = [a] + way  # a, b, ..., a
                ring = cycle[:-1]
                start = ring.index(min(ring))
                key = tuple(ring[start:] + ring[:start])
                found.setdefault(key, list(key) + [key[0]])
    return [found[key] for key in sorted(found)]


def _shortest(graph, start: str, goal: str, members: set) -> list[str]:
    """The shortest path start -> ... -> goal inside ``members`` (breadth first, by name)."""
    previous = {start: None}
    queue = deque([start])
    while queue and goal not in previous:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt in members and nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    path, node = [], goal
    while node is not None:
        path.append(node)
        node = previous[node]
    return path[::-1]


def file_of(module: str, package: Path = PACKAGE) -> str:
    rel = Path(*module.split(".")[1:])
    name = rel / "__init__.py" if (package / rel).is_dir() else rel.with_suffix(".py")
    return str(Path(package.name) / name)


def cycle_chains(package: Path = PACKAGE) -> list[str]:
    """Every cycle as ``memory_core/a.py:12 -> memory_core/b.py:3 -> memory_core/a.py``: each
    file with the line(s) of its import of the next."""
    graph = import_graph(package)
    chains = []
    for cycle in cycles(graph):
        steps = [
            f"{file_of(a, package)}:{','.join(map(str, sorted(set(graph[a][b]))))}"
            for a, b in zip(cycle, cycle[1:])
        ]
        chains.append(" -> ".join(steps + [file_of(cycle[-1], package)]))
    return chains


def violations(package: Path = PACKAGE) -> list[str]:
    bad = []
    known = frozenset(module_name(p, package) for p in modules(package))
    for path in modules(package):
        me = module_name(path, package)
        mine = LAYERS.index(layer_of(me))
        for line, target in imports_of(path, package, known):
            top = target.split(".")[0]
            if (
                top in ENGINE_PACKAGES
                and layer_of(me) != STORE_ONLY
                and me not in ENGINE_USERS_BESIDE_THE_STORE
            ):
                bad.append(
                    f"{me}:{line} imports {target} (only the store layer, {sorted(ENGINE_USERS_BESIDE_THE_STORE)} "
                    "import cognee and its engines)"
                )
            if top == "memory_core":
                theirs = LAYERS.index(layer_of(target))
                if theirs > mine:
                    bad.append(
                        f"{me}:{line} ({LAYERS[mine]}) imports {target} ({LAYERS[theirs]}, a layer above)"
                    )
    return bad


def package_copy(tmp_path: Path) -> Path:
    """The package's modules copied to ``tmp_path/memory_core`` (probes go there, never into
    the real tree, which other test processes read meanwhile)."""
    copy = tmp_path / "memory_core"
    for path in modules():
        target = copy / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(path, target)
        except FileNotFoundError:  # removed since it was listed (a module moving)
            pass
    return copy


def test_every_module_has_a_known_layer():
    for path in modules():
        assert layer_of(module_name(path)) in LAYERS, f"{path}: folder is not a known layer {LAYERS}"


def test_imports_point_down_only():
    assert violations() == []


def test_no_import_cycles():
    chains = cycle_chains()
    assert not chains, "import cycles (each file imports the next, at the line given):\n  " + "\n  ".join(
        chains
    )


def test_the_checker_sees_an_upward_import(tmp_path):
    """The layer test can fail: a core module importing the CLI, and cognee, is reported."""
    copy = package_copy(tmp_path)
    (copy / "core" / "_layer_probe.py").write_text(
        "def f():\n    from memory_core.shell import cli\n    import cognee\n"
    )
    found = violations(copy)
    assert any(
        v.startswith("memory_core.core._layer_probe:2 ") and "memory_core.shell.cli (shell" in v
        for v in found
    ), found
    assert any(v.startswith("memory_core.core._layer_probe:3 imports cognee") for v in found), found
    assert not any("_layer_probe" in v for v in violations()), "the probe reached the real tree"


def test_the_checker_sees_a_cycle(tmp_path):
    """The cycle test can fail: two core modules importing each other (one at module level
    as `from package import submodule`, one inside a function) are named as a chain, and a
    third module importing one of them is not part of it."""
    copy = package_copy(tmp_path)
    (copy / "core" / "_cycle_a.py").write_text('"""a"""\n\nfrom memory_core.core import _cycle_b\n')
    (copy / "core" / "_cycle_b.py").write_text("def f():\n    import memory_core.core._cycle_a\n")
    (copy / "core" / "_cycle_c.py").write_text("from memory_core.core._cycle_a import _cycle_b\n")
    chains = cycle_chains(copy)
    assert (
        "memory_core/core/_cycle_a.py:3 -> memory_core/core/_cycle_b.py:2 -> memory_core/core/_cycle_a.py"
        in chains
    ), chains
    assert not any("_cycle_c" in chain for chain in chains), chains
    assert not any("_cycle_" in chain for chain in cycle_chains()), "the probe reached the real tree"


def test_a_longer_cycle_is_one_chain_in_import_order(tmp_path):
    """Three modules in a ring: one chain, starting at the first by name, each step the
    import that leads to the next; ``from package import name`` of a non-module name is
    an import of the package's __init__ (here: a fourth module in the ring)."""
    copy = tmp_path / "memory_core"
    (copy / "core" / "sub").mkdir(parents=True)
    (copy / "__init__.py").write_text("")
    (copy / "core" / "__init__.py").write_text("")
    (copy / "core" / "sub" / "__init__.py").write_text("from memory_core.core import x\n")
    (copy / "core" / "x.py").write_text("\n\nimport memory_core.core.y\n")
    (copy / "core" / "y.py").write_text("from .z import THING\n")
    (copy / "core" / "z.py").write_text(
        "from memory_core.core.sub import NAME  # the package's own name\nTHING = 1\n"
    )
    assert cycle_chains(copy) == [
        "memory_core/core/sub/__init__.py:1 -> memory_core/core/x.py:3 -> memory_core/core/y.py:1"
        " -> memory_core/core/z.py:1 -> memory_core/core/sub/__init__.py"
    ]
