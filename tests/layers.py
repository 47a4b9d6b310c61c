"""The house's layers, read from the code's imports: the rules ``tests/test_layers.py`` enforces and
the drawing in the README's Layout section (``make layout`` writes it; the test checks it is
current).

Every module of the package is parsed (never imported) and each ``import`` of a ``toolgym``
module, at any depth of the file (a function-local import is an import), is an arrow. Imports
under ``if TYPE_CHECKING:`` are annotations, not arrows. Modules are grouped into *rooms* (a
subpackage, or one module of the env layer's root), each on a floor (:data:`FLOORS`): an arrow
may only run down a floor, or stay in its room; a package's face (``__init__.py``) may hand on
names of its own subpackages. Separately, no module may take part in an import circle.

Run as a script to print the drawing (``python tests/layers.py``), or the house's figures for a
checkout, this one or another (``python tests/layers.py --stats [CHECKOUT]``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL_FOLDERS = ("cadquery", "blender", "scene")
#: The package's folders (the design card keeps subpackages as top-level folders).
FOLDERS = {
    "toolgym": "toolgym",
    "toolgym.agents": "agents",
    "toolgym.envs": "envs",
    "toolgym.renderers": "renderers",
    "toolgym.verifiers": "verifiers",
}
#: Rooms, top floor first. An arrow runs from a room to one on a lower floor, never up or
#: across; the tools' folders (``TOOLS``) are one floor, and never import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("toolgym",),  # registration, `python -m toolgym`
    ("toolgym.cli",),
    ("toolgym.agents",),
    ("toolgym.envs.serving",),
    ("toolgym.envs.recording", "toolgym.envs.wrappers", "toolgym.envs.doctor"),
    ("toolgym.envs.cadquery", "toolgym.envs.blender", "toolgym.envs.scene"),
    ("toolgym.envs.episode", "toolgym.envs.verification"),
    ("toolgym.envs.tasks", "toolgym.envs.grammar"),
    ("toolgym.envs.domains",),
    ("toolgym.envs.tools", "toolgym.envs.registration"),
    ("toolgym.renderers",),
    ("toolgym.verifiers",),
    ("toolgym.envs.sandbox",),
    ("toolgym._version",),
)
TOOLS = FLOORS[5]
#: What each room holds, for the drawing.
JOBS = {
    "toolgym": "registration",
    "toolgym.cli": "CLI",
    "toolgym.agents": "trainer, runners, LLM doors",
    "toolgym.envs.serving": "env server, remote env",
    "toolgym.envs.recording": "recorder, replays",
    "toolgym.envs.wrappers": "numeric spaces, mixed tools",
    "toolgym.envs.doctor": "toolgym doctor",
    "toolgym.envs.cadquery": "CadQuery",
    "toolgym.envs.blender": "Blender",
    "toolgym.envs.scene": "Panda3D + Bullet",
    "toolgym.envs.episode": "episode loop",
    "toolgym.envs.verification": "batch verify, fuzzer",
    "toolgym.envs.tasks": "task model, suites",
    "toolgym.envs.grammar": "action grammar",
    "toolgym.envs.domains": "Domain plug-in",
    "toolgym.envs.tools": "tool registry",
    "toolgym.envs.registration": "DomainCard, register",
    "toolgym.renderers": "mesh views, offscreen",
    "toolgym.verifiers": "metrics, CAD verifier",
    "toolgym.envs.sandbox": "sandbox",
    "toolgym._version": "version",
}
FLOOR = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package in the checkout ``root``: its dotted name to its file."""
    found = {}
    for package, folder in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imports(tree: ast.AST, name: str, is_package: bool) -> Iterator[str]:
    """The dotted names a module imports, outside ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _imports(child, name, is_package))
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package up
                package = name.split(".") if is_package else name.split(".")[:-1]
                parent = package[: len(package) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            # ``from a import b``: module ``a.b`` where there is one, else a name of ``a``
            yield from (f"{base}.{alias.name}" for alias in node.names)
        yield from _imports(node, name, is_package)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module to the package's modules it imports (the longest known prefix of each name)."""
    known = modules(root)

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = {resolve(t) for t in _imports(tree, name, path.name == "__init__.py")}
        graph[name] = {t for t in targets if t and t != name and t.startswith("toolgym")}
    return graph


def room(module: str) -> str:
    """The room a module stands in: the longest room name that is a prefix of it."""
    rooms = [r for r in FLOOR if module == r or module.startswith(r + ".")]
    if not rooms:
        raise KeyError(f"{module} stands in no room of tests/layers.py FLOORS: add it to one")
    return max(rooms, key=len)


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow that runs up a floor or across one, in words."""
    found = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = room(source), room(target)
            if here == there or target.startswith(source + "."):  # a face hands on its own
                continue
            if FLOOR[there] <= FLOOR[here]:
                way = "up" if FLOOR[there] < FLOOR[here] else "across"
                found.append(f"{source} -> {target} ({way}: {here} -> {there})")
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other in a loop (Tarjan's strongly connected parts)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def room_arrows(graph: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    """Arrows between rooms, each with how many module imports it stands for."""
    arrows: dict[tuple[str, str], int] = {}
    for source, targets in graph.items():
        for target in targets:
            pair = (room(source), room(target))
            if pair[0] != pair[1] and not target.startswith(source + "."):
                arrows[pair] = arrows.get(pair, 0) + 1
    return arrows


def drawing(graph: dict[str, set[str]] | None = None) -> str:
    """The rooms on their floors and the arrows between them, as a Mermaid flowchart (GitHub
    draws it): one row a floor, top floor first. An arrow to a floor below the next is drawn
    only when the rooms between do not already carry it, so the picture stays legible; every
    arrow is listed in :func:`room_arrows`."""
    graph = import_graph() if graph is None else graph
    arrows = room_arrows(graph)
    node = {r: r.removeprefix("toolgym.").replace(".", "_") for r in FLOOR}
    node["toolgym"] = "root"
    lines = ["```mermaid", "flowchart TB"]
    for level, rooms in enumerate(FLOORS):
        lines.append(f"  subgraph floor{len(FLOORS) - level}[ ]")
        lines.append("    direction LR")
        for r in rooms:
            label = r.removeprefix("toolgym.") if r != "toolgym" else "toolgym"
            lines.append(f'    {node[r]}["{label}<br/><small>{JOBS[r]}</small>"]')
        lines.append("  end")
    reach = _reach(arrows)
    for source, target in sorted(arrows, key=lambda pair: (FLOOR[pair[0]], pair)):
        via = [m for m in FLOOR if (source, m) in arrows and m != target and target in reach[m]]
        if via:  # carried already, through a room it also imports
            continue
        lines.append(f"  {node[source]} --> {node[target]}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def _reach(arrows: dict[tuple[str, str], int]) -> dict[str, set[str]]:
    """Every room each room reaches by arrows, itself included."""
    reach = {r: {r} for r in FLOOR}
    for r in sorted(FLOOR, key=FLOOR.get, reverse=True):  # bottom floor first
        for source, target in arrows:
            if source == r:
                reach[r] |= reach[target]
    return reach


def stats(root: Path = ROOT) -> dict[str, object]:
    """A checkout's figures, read as the checks read them (any checkout: no rooms needed)."""
    graph, files = import_graph(root), modules(root)

    def tool(module: str) -> str | None:
        parts = module.split(".")
        inside = len(parts) > 2 and parts[1] == "envs" and parts[2] in TOOL_FOLDERS
        return parts[2] if inside else None

    return {
        "modules": len(files),
        "lines": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files.values()),
        "env-layer root modules": sum(
            1
            for m, p in files.items()
            if m.count(".") == 2 and m.startswith("toolgym.envs.") and p.name != "__init__.py"
        ),
        "import circles": [len(c) for c in circles(graph)],
        "env layer -> agents imports": sum(
            1
            for a, targets in graph.items()
            for b in targets
            if a.startswith("toolgym.envs") and b.startswith("toolgym.agents")
        ),
        "imports into a tool's folder from outside it": sum(
            1 for a, targets in graph.items() for b in targets if tool(b) and tool(a) != tool(b)
        ),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stats"]:
        print(stats(Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT))
    else:
        print(drawing(), end="")
