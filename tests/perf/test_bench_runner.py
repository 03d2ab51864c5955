"""``make bench`` builds its summary and the README table from the figures the benches recorded, and nothing else.

The README's performance table is only ever written from these records, so the records must say whether a
goal was met from the figures themselves, and the writer must replace the marked block and nothing around it.
"""

from __future__ import annotations

import datetime
import json

import pytest

from perf import run
from perf.figures import FIGURES_ENV, read_figures, report


def test_a_ratio_is_judged_against_its_goal_and_recorded_as_one_json_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv(FIGURES_ENV, str(path))
    report(bench="b", what="under", ours="1 s", peer="peer 2 s", ratio=0.5, goal_ratio=1.0, goal="<= 1", load=0.5)
    report(bench="b", what="over", ours="3 s", peer="peer 2 s", ratio=1.5, goal_ratio=1.0, goal="<= 1", load=0.5)
    report(bench="b", what="at", ours="2 s", peer="peer 2 s", ratio=1.0, goal_ratio=1.0, goal="<= 1", load=0.5)
    report(bench="b", what="fast page", ours="120 ms", value=120, goal_value=300, goal="< 300 ms", load=0.5)
    report(bench="b", what="slow page", ours="300 ms", value=300, goal_value=300, goal="< 300 ms", load=0.5)
    report(bench="b", what="no goal", ours="7 ms", peer="bm25s 1 ms", ratio=7.0, load=0.5)
    figures = read_figures(str(path))
    assert [(f.what, f.met) for f in figures] == [("under", True), ("over", False), ("at", True),
                                                  ("fast page", True), ("slow page", False), ("no goal", None)]
    assert len(path.read_text().splitlines()) == 6 and json.loads(path.read_text().splitlines()[0])["ratio"] == 0.5
    printed = capsys.readouterr().out
    assert "over: 3 s | peer 2 s | 1.50x [goal <= 1: NOT MET]" in printed


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(FIGURES_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    report(bench="b", what="x", ours="1 s", load=0.1)
    assert list(tmp_path.iterdir()) == []


def _figures(tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    monkeypatch.setenv(FIGURES_ENV, str(path))
    report(bench="b", what="absolute | piped", ours="5 ms", value=5, goal_value=50, goal="< 50 ms", load=1.25)
    report(bench="b", what="beside a peer", ours="2 s", peer="peer 1 s", ratio=2.0, goal_ratio=1.0, goal="<= 1",
           load=0.75)
    return read_figures(str(path))


def test_the_summary_names_every_goal_missed_and_lists_peers_first(tmp_path, monkeypatch):
    figures = _figures(tmp_path, monkeypatch)
    lines = run.summary(figures, started=datetime.datetime(2026, 12, 1), loads=[0.5, 1.25], seconds=600,
                        failed=["scaleout"], ran=["a", "b"])
    assert "1 of 2 goals met; not met: beside a peer." in lines[0]
    assert "load average 0.50-1.25" in lines[0]
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| what")]
    assert rows[0].startswith("| beside a peer | 2 s | peer 1 s | 2.00x | <= 1 | **not met** | 0.75 |")
    assert rows[1].startswith("| absolute \\| piped | 5 ms | - | - | < 50 ms | met | 1.25 |")
    assert lines[-1] == "Benches that failed in this run (no figures from them): scaleout."


def test_the_readme_block_between_the_markers_is_replaced_and_nothing_else(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n{run.START_MARK}\nold table\n{run.END_MARK}\nafter\n", encoding="utf-8")
    monkeypatch.setattr(run, "README", readme)
    run.write_readme(["new line 1", "new line 2"])
    assert readme.read_text(encoding="utf-8") == (
        f"# Title\n\nbefore\n{run.START_MARK}\nnew line 1\nnew line 2\n{run.END_MARK}\nafter\n")


def test_a_readme_without_markers_is_refused_untouched(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n", encoding="utf-8")
    monkeypatch.setattr(run, "README", readme)
    with pytest.raises(SystemExit, match="no bench markers"):
        run.write_readme(["x"])
    assert readme.read_text(encoding="utf-8") == "no markers\n"


def test_the_real_readme_carries_the_markers_and_every_listed_bench_exists():
    text = run.README.read_text(encoding="utf-8")
    assert text.count(run.START_MARK) == 1 and text.count(run.END_MARK) == 1
    assert text.index(run.START_MARK) < text.index(run.END_MARK)
    missing = [bench.script for bench in run.BENCHES if not (run.REPO / bench.script).is_file()]
    assert missing == []


def test_growth_figures_make_a_table_of_their_own_and_their_goals_still_count():
    from perf.figures import Figure

    figures = [Figure("cuad_process", "one process", "7 s", "peer 9 s", 0.8, "0.80x", "<= 1", True, 1.0),
               Figure("growth", "grading, 100 contracts", "3 s", "10 contracts: 2 s", 11.0, "11.00x CPU", "<= 10x",
                      False, 1.0),
               Figure("queue_growth", "queue page, 10,000 items", "50 ms", "100 items", 1.1, "1.10x", "<= 1.2x",
                      True, 1.0)]
    lines = run.summary(figures, started=datetime.datetime(2026, 1, 1), loads=[1.0], seconds=60, failed=[],
                        ran=["cuad_process", "growth", "queue_growth"])
    heading = next(i for i, line in enumerate(lines) if line.startswith("Growth with the work"))
    assert any("one process" in line for line in lines[:heading])
    assert not any("contracts" in line or "10,000 items" in line for line in lines[2:heading])
    assert [line.split(" | ")[0] for line in lines[heading:] if line.startswith("| grading") or
            line.startswith("| queue")] == ["| grading, 100 contracts", "| queue page, 10,000 items"]
    assert "2 of 3 goals met; not met: grading, 100 contracts." in lines[0]


def test_growth_per_tenfold_of_work_is_ten_when_cost_is_linear():
    from perf.scoring.bench_growth import per_tenfold

    assert per_tenfold(10.0, 1.0, 1000, 100) == pytest.approx(10.0)
    assert per_tenfold(5.0, 1.0, 510, 100) == pytest.approx(5.0 ** (1 / 0.7075701760979364))
    assert per_tenfold(1.0, 1.0, 50_000, 10_000) == 1.0


def test_the_firm_scale_table_puts_each_goal_at_1x_10x_and_100x_beside_its_peer(tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    monkeypatch.setenv(FIGURES_ENV, str(path))
    for scale, ratio in (("1x", 0.9), ("10x", 1.1), ("100x", 1.3)):
        report(bench="trec", what=f"bootstrap {scale}", ours="1 ms", peer="numpy 1 ms", ratio=ratio, goal_ratio=1.5,
               goal="<= 1.5", load=1.0, row="paired family bootstrap", scale=scale, cell=f"ours vs numpy: {ratio}x")
    report(bench="bm25_memory", what="memory 1x", ours="9 MiB", peer="bm25s 5 MiB", ratio=1.8, goal_ratio=1.2,
           goal="<= 1.2x", load=1.0, row="BM25 index memory", scale="1x")
    figures = read_figures(str(path))
    lines = run.growth_table(figures)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    assert list(rows) == [row for row, _ in run.FIRM_SCALE]  # every goal has its row, in order
    assert rows["paired family bootstrap"].split(" | ")[2:6] == [
        "ours vs numpy: 0.9x", "ours vs numpy: 1.1x", "ours vs numpy: 1.3x", "<= 1.5"]
    assert rows["paired family bootstrap"].endswith("| met |")
    # Without a short cell text the figure and its ratio are shown; a size not measured is a dash.
    assert rows["BM25 index memory"].split(" | ")[2:5] == ["9 MiB; 1.80x", "-", "-"]
    assert rows["BM25 index memory"].endswith("| **not met** |")
    assert rows["corpus import"].endswith("| not measured in this run |")
    summary = run.summary(figures, started=datetime.datetime(2026, 1, 1), loads=[1.0], seconds=60, failed=[],
                          ran=["trec", "bm25_memory"])
    assert any(line.startswith("Firm scale:") for line in summary)
