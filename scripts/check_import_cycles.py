"""Fail when the project's modules import each other in a cycle not already known.

The graph is grimp's (the one import-linter checks the contracts on): every import of one project module by
another, at module level or inside a function, since a cycle through a deferred import is still two modules
that cannot be understood, tested or moved apart. A cycle is a strongly connected component of that graph
with more than one module. Each is printed with one loop of imports through it and the lines that make it.

Usage: python scripts/check_import_cycles.py   (exit 1 when a cycle is not in KNOWN_CYCLES or one listed there
is gone, so the list only ever shrinks)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Set
from itertools import pairwise

PACKAGES = ("reviewapp", "benchmarks", "grading", "scoring")

# Cycles that existed when this check joined `make lint` were taken apart one by one;
# the last, review assignment <-> review services, went with the feature folders. Keep this empty: break a new
# cycle by moving the shared code down a layer.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()


def strongly_connected(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted, in sorted order (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            if successors:
                child = successors.pop(0)
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def loop_through(component: Set[str], edges: Mapping[str, Iterable[str]]) -> list[str]:
    """One shortest loop of imports from the component's first module back to it, inside the component."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges.get(node, ())):
                if child not in component:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise ValueError("not a cycle")


def judge(cycles: Iterable[Iterable[str]], known: Iterable[frozenset[str]]) -> tuple[list[list[str]], list[list[str]]]:
    """(cycles not allowed: not within any known cycle, known cycles no longer found)."""
    known = list(known)
    found = [sorted(cycle) for cycle in cycles]
    new = [cycle for cycle in found if not any(set(cycle) <= allowed for allowed in known)]
    gone = [sorted(allowed) for allowed in known if not any(set(cycle) <= allowed for cycle in found)]
    return new, gone


def main() -> int:
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    cycles = strongly_connected(edges)
    for cycle in cycles:
        loop = loop_through(set(cycle), edges)
        status = "known" if any(set(cycle) <= allowed for allowed in KNOWN_CYCLES) else "NEW"
        print(f"{status} cycle of {len(cycle)} modules: {' -> '.join(loop)}")
        for importer, imported in pairwise(loop):
            for detail in graph.get_import_details(importer=importer, imported=imported)[:1]:
                print(f"    {importer}:{detail['line_number']}  {detail['line_contents']}")
    new, gone = judge(cycles, KNOWN_CYCLES)
    for allowed in gone:
        print(f"known cycle gone, remove it from KNOWN_CYCLES in {__file__}: {', '.join(allowed)}")
    if new:
        print(f"{len(new)} new import cycle(s): break them (move the shared code down a layer), don't list them")
    print(f"import cycles: {len(cycles)} ({len(cycles) - len(new)} known, {len(new)} new)")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
