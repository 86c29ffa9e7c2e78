"""No two modules of one folder import each other, even through others of the folder.

The layers contract orders the folders; inside a folder the modules must form an order too,
or one of them imports the other inside a function to get round the cycle, and which of
the two loads first decides what works. Imports inside functions count (they run when
called); imports under `if TYPE_CHECKING:` do not (they never run). When two modules need
the same piece, it moves down into a module both import.
"""

from __future__ import annotations

from collections import defaultdict

import grimp


def _folder(module: str) -> str:
    return module.rpartition(".")[0]


def _folder_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Each module's direct imports of modules in its own folder."""
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module and _folder(imported) == _folder(module):
                edges[module].add(imported)
    return edges


def cycles_within_folders(graph: grimp.ImportGraph) -> list[list[str]]:
    """The modules that import each other, each group sorted: the strongly connected
    components of more than one module (Tarjan's algorithm, without recursion)."""
    edges = _folder_edges(graph)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def test_no_folder_holds_an_import_cycle() -> None:
    graph = grimp.build_graph("meaningbench", cache_dir=None, exclude_type_checking_imports=True)
    assert cycles_within_folders(graph) == []


def test_the_check_finds_a_cycle_through_a_third_module_and_ignores_other_folders() -> None:
    graph = grimp.ImportGraph()
    for module in ("p.a", "p.b", "p.c", "p.d", "q.x"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")  # a -> b -> c -> a
    graph.add_import(importer="p.d", imported="p.a")  # imports the cycle, is not part of it
    graph.add_import(importer="p.d", imported="q.x")
    graph.add_import(importer="q.x", imported="p.d")  # across folders: the layers' business
    assert cycles_within_folders(graph) == [["p.a", "p.b", "p.c"]]
