"""The import-cycle check of `make lint`: its graph arithmetic and its allow-list, on small made-up graphs."""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "check_import_cycles.py"
_spec = importlib.util.spec_from_file_location("check_import_cycles", _PATH)
assert _spec is not None and _spec.loader is not None
cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cycles)


def test_it_finds_every_cycle_of_more_than_one_module_and_nothing_else():
    edges = {
        "a": ["b"], "b": ["c"], "c": ["a", "d"],  # a -> b -> c -> a
        "d": ["e"], "e": ["d"],  # d <-> e, reached from the first cycle but not part of it
        "f": ["f", "a"],  # importing itself is no cycle between modules
        "g": [],
    }
    assert cycles.strongly_connected(edges) == [["a", "b", "c"], ["d", "e"]]


def test_it_finds_a_cycle_on_a_long_chain_without_recursing():
    n = 5000
    edges = {f"m{i:05d}": [f"m{i + 1:05d}"] for i in range(n)}
    edges[f"m{n:05d}"] = ["m00000"]
    (component,) = cycles.strongly_connected(edges)
    assert len(component) == n + 1


def test_it_names_one_loop_of_imports_through_a_cycle():
    edges = {"a": ["b", "x"], "b": ["c"], "c": ["a"], "x": ["a"]}
    assert cycles.loop_through({"a", "b", "c"}, edges) == ["a", "b", "c", "a"]


def test_it_allows_a_known_cycle_and_one_that_shrank():
    known = [frozenset({"a", "b", "c"})]
    assert cycles.judge([["a", "b", "c"]], known) == ([], [])
    assert cycles.judge([["a", "b"]], known) == ([], [])


def test_it_refuses_a_new_cycle_and_a_known_one_that_grew():
    known = [frozenset({"a", "b"})]
    assert cycles.judge([["a", "b", "c"], ["x", "y"]], known) == ([["a", "b", "c"], ["x", "y"]], [["a", "b"]])


def test_it_reports_a_known_cycle_that_is_gone_so_the_list_shrinks():
    known = [frozenset({"a", "b"}), frozenset({"c", "d"})]
    assert cycles.judge([["a", "b"]], known) == ([], [["c", "d"]])
