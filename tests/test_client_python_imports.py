"""The Python client's modules import each other without a cycle (issue 27: client <-> mirror
and async_client <-> async_mirror imported each other, hidden behind TYPE_CHECKING and imports
inside functions). Every import counts here, wherever it is written: a cycle that only closes
at type-checking time or on first call is still a cycle to read and to refactor."""
import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parent.parent / "clients" / "python" / "stateserver"
ROOT = PACKAGE.name

#: The sans-I/O core: it takes bytes and messages in and says what to send; the shells do I/O.
CORE = {"stateserver.connection", "stateserver.replica"}
IO_MODULES = {"asyncio", "threading", "subprocess", "socket", "select", "selectors"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path = PACKAGE) -> Dict[str, Path]:
    return {module_name(path, package): path for path in sorted(package.rglob("*.py"))}


def imported(name: str, path: Path, known: Set[str]) -> Set[str]:
    """Every module of the package that `name` (at `path`) imports, anywhere in its text."""
    is_package = path.name == "__init__.py"
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import mod` imports the submodule; `from mod import name` only mod.
            targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in known)
    found.discard(name)
    return found


def import_graph(package: Path = PACKAGE) -> Dict[str, Set[str]]:
    found = modules(package)
    return {name: imported(name, path, set(found)) for name, path in found.items()}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """One cycle through each strongly connected part with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    parts: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return parts


def test_the_package_imports_without_a_cycle():
    graph = import_graph()
    assert "stateserver.mirror" in graph["stateserver.client"], graph  # the walk sees imports
    found = cycles(graph)
    assert found == [], (
        "modules of the Python client import each other (directly or through others): "
        + "; ".join(" <-> ".join(part) for part in found)
        + ". Move what both need into a module below them (connection.py, replica.py), or name"
        " what one needs of the other as a Protocol.")


def test_the_core_does_no_io():
    for name in CORE:
        path = modules()[name]
        tree = ast.parse(path.read_text())
        names = {alias.name.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in (node.names if isinstance(node, ast.Import)
                               else [ast.alias(name=node.module or "")])}
        assert not names & IO_MODULES, f"{name} imports {sorted(names & IO_MODULES)}"
        assert not import_graph()[name] - CORE - {"stateserver.errors", "stateserver.log"}, name


def test_a_cycle_is_found(tmp_path):
    """The check can fail: a copy of the package with the old circle put back."""
    package = tmp_path / "stateserver"
    package.mkdir()
    (package / "__init__.py").write_text("from .client import Client\n")
    (package / "client.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .mirror import Mirror\n")
    (package / "mirror.py").write_text("def make():\n    from .client import Client\n")
    (package / "log.py").write_text("import stateserver.client\n")
    graph = import_graph(package)
    assert graph["stateserver.log"] == {"stateserver.client"}
    assert cycles(graph) == [["stateserver.client", "stateserver.mirror"]]
