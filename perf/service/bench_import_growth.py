"""How a corpus import grows with its file, in every streamed format: peak memory and CPU at 1x, 10x and 100x.

Each figure is one whole process (a fresh interpreter, as a user's command), its CPU time and peak RSS
(``getrusage`` of the child): the product's import (``manage.py import_corpus``, or ``import_statutes`` for the
US Code) into a fresh migrated SQLite database, beside the peer: a plain reading of the same file that takes each
section's text and keeps nothing (lxml ``iterparse`` clearing each section for XML; ``json.loads`` per line for
JSON Lines; ``csv.DictReader`` for CSV). The synthetic files:

- eCFR XML (a bulk title: parts, subparts, DIV8 sections; ``bench_ecfr_import``'s generator): 2, 20, 200 MB;
- USLM XML (a US Code title: chapters of sections with subsections and a source credit): 1, 10, 100 MB;
- JSON Lines and CSV corpus files (docs/corpus-format.md): 1, 10, 100 MB.

The 100x sizes take minutes each (the import writes every provision and its passage): they run only with
``BENCH_IMPORT_FULL=1``; the default run stops at 10x and says so. The goal: the import's peak memory is a
constant multiple of the peer's, whatever the size (the ratio at the largest size over the ratio at 1x stays
<= 1.25: no growth with the file), and within about 2x of the peer's. Prints figures, asserts nothing.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import load_average, report  # noqa: E402
from perf.service.bench_ecfr_import import _write_title  # noqa: E402

BENCH = Path(__file__).stem
FULL = os.environ.get("BENCH_IMPORT_FULL", "") == "1"
FLAT_GOAL = 1.25
# The formats with a row of the growth table (perf/run.py, FIRM_SCALE): eCFR, whose titles reach hundreds of MB,
# and the corpus files any source is turned into, whose size has no bound either.
GROWTH_ROWS = {"eCFR XML": "corpus import", "JSON Lines": "corpus import, JSON Lines", "CSV": "corpus import, CSV"}

WORDS = ("Each person subject to this chapter shall keep the records required by this section for three years "
         "after the date of the transaction and make them available to the Secretary on request. ")


def _write_uslm(path: Path, megabytes: int) -> int:
    ns = "http://xml.house.gov/schemas/uslm/1.0"
    count, target = 0, megabytes * 1024 * 1024
    with path.open("w", encoding="utf-8") as out:
        out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<uscDoc xmlns="{ns}" identifier="/us/usc/t99"><main>'
                  '<title identifier="/us/usc/t99"><num value="99">Title 99</num><heading>Synthetic Provisions'
                  '</heading>\n')
        chapter = 0
        while out.tell() < target:
            chapter += 1
            out.write(f'<chapter identifier="/us/usc/t99/ch{chapter}"><num value="{chapter}">CHAPTER {chapter}'
                      f"</num><heading>Records {chapter}</heading>\n")
            for _ in range(20):
                count += 1
                subsections = "".join(f'<subsection><num value="{c}">({c})</num><content>{WORDS * 2}</content>'
                                      "</subsection>" for c in "abcd")
                out.write(f'<section identifier="/us/usc/t99/s{count}"><num value="{count}">§ {count}.</num>'
                          f"<heading>Records and reports {count}</heading>{subsections}"
                          f"<sourceCredit>(Pub. L. 99–{count}, Jan. 1, 2020.)</sourceCredit></section>\n")
            out.write("</chapter>\n")
        out.write("</title></main></uscDoc>\n")
    return count


def _records(megabytes: int):
    target, size, n = megabytes * 1024 * 1024, 0, 0
    while size < target:
        n += 1
        record = {"citation": f"99 SYN § {n}", "heading": f"Records and reports {n}", "text": WORDS * 8,
                  "url": f"https://example.org/syn/{n}", "as_of": "2025-01-01", "jurisdiction": "Synthetica",
                  "code": "Synthetic Code", "chapter": str(n // 50 + 1), "number": str(n)}
        size += len(json.dumps(record)) + 1
        yield record


def _write_jsonl(path: Path, megabytes: int) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for record in _records(megabytes):
            out.write(json.dumps(record) + "\n")
            count += 1
    return count


def _write_csv(path: Path, megabytes: int) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = None
        for record in _records(megabytes):
            if writer is None:
                writer = csv.DictWriter(out, fieldnames=list(record))
                writer.writeheader()
            writer.writerow(record)
            count += 1
    return count


XML_PEER = textwrap.dedent("""
    import sys
    from lxml import etree
    tag = sys.argv[2]
    count = 0
    for _, elem in etree.iterparse(sys.argv[1], events=("end",), tag=tag):
        text = " ".join(" ".join(elem.itertext()).split())
        count += 1
        elem.clear(keep_tail=True)
        while elem.getprevious() is not None:
            del elem.getparent()[0]
    print(count)
""")
JSONL_PEER = textwrap.dedent("""
    import json, sys
    count = 0
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            text = " ".join(record["text"].split())
            count += 1
    print(count)
""")
CSV_PEER = textwrap.dedent("""
    import csv, sys
    count = 0
    with open(sys.argv[1], encoding="utf-8", newline="") as rows:
        for row in csv.DictReader(rows):
            text = " ".join(row["text"].split())
            count += 1
    print(count)
""")
MEASURE = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
""")


def _measure(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of one process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True,
                         env=env, cwd=REPO).stdout.split()
    return float(out[0]), float(out[1])


Format = tuple[str, str, Callable[[Path, int], int], tuple[int, ...], list[str], list[str]]


def _formats() -> list[Format]:
    """(label, file name, generator, sizes in MB, import command after manage.py, peer command)."""
    sizes = lambda base: (base, base * 10, base * 100) if FULL else (base, base * 10)  # noqa: E731
    return [
        ("eCFR XML", "ECFR-title12.xml", _write_title, sizes(2), ["import_corpus"], ["-c", XML_PEER, "DIV8"]),
        ("USLM XML", "usc99.xml", _write_uslm, sizes(1), ["import_statutes", "--format", "uslm-xml"],
         ["-c", XML_PEER, "{http://xml.house.gov/schemas/uslm/1.0}section"]),
        ("JSON Lines", "synthetic.jsonl", _write_jsonl, sizes(1), ["import_corpus", "--code", "syn"],
         ["-c", JSONL_PEER]),
        ("CSV", "synthetic.csv", _write_csv, sizes(1), ["import_corpus", "--code", "syn"], ["-c", CSV_PEER]),
    ]


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DJANGO_SETTINGS_MODULE": "reviewapp.settings"}
    env.pop("REDIS_URL", None)
    if not FULL:
        # Said in the table itself, so a reader of the README knows the largest size was not run.
        report(bench=BENCH, what="Imports at 100x (eCFR 200 MB; USLM, JSON Lines, CSV 100 MB)",
               ours="not run in this run: BENCH_IMPORT_FULL=1 runs them (about 1.5 min for eCFR, 0.5 min each other)")
    with tempfile.TemporaryDirectory(prefix="bench_import_growth-") as tmp:
        directory = Path(tmp)
        template = directory / "migrated.sqlite3"
        subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], check=True,
                       env={**env, "DATABASE_URL": f"sqlite:///{template}"}, cwd=REPO)
        # What a process holds before reading anything: Django and the product's import code loaded (ours), the
        # interpreter with the peer's modules. The working memory of each is its peak above that.
        base_ours = _measure([sys.executable, "-c", "import django; django.setup(); "
                              "import benchmarks.corpus.services, lxml.etree"],
                             {**env, "DATABASE_URL": f"sqlite:///{template}"})[1]
        for label, name, write, sizes, command, peer_command in _formats():
            imports = "import lxml.etree" if "etree" in peer_command[1] else "import csv, json"
            base_peer = _measure([sys.executable, "-c", imports], env)[1]
            first_ratio = None
            for scale, megabytes in zip(("1x", "10x", "100x"), sizes, strict=False):
                path = directory / name
                sections = write(path, megabytes)
                size = path.stat().st_size / 1024 / 1024
                load = load_average()
                peer_args = [sys.executable, peer_command[0], peer_command[1], str(path), *peer_command[2:]]
                peer = _measure(peer_args, env)
                database = directory / "import.sqlite3"
                shutil.copy(template, database)
                ours = _measure([sys.executable, "manage.py", *command, str(path)],
                                {**env, "DATABASE_URL": f"sqlite:///{database}"})
                database.unlink()
                path.unlink()
                memory_ratio = ours[1] / peer[1]
                first_ratio = first_ratio or memory_ratio
                growth = memory_ratio / first_ratio
                report(bench=BENCH, what=f"{label} import, {size:.0f} MB ({sections:,} sections), SQLite, "
                                         "one process",
                       ours=f"CPU {ours[0]:.1f} s, peak {ours[1]:.0f} MiB",
                       peer=f"plain reading CPU {peer[0]:.1f} s, peak {peer[1]:.0f} MiB",
                       ratio=growth,
                       ratio_text=f"{memory_ratio:.2f}x memory ({growth:.2f}x the 1x size's ratio; above "
                                  f"startup {max(0.0, ours[1] - base_ours):.0f} against "
                                  f"{max(0.0, peer[1] - base_peer):.0f} MiB), "
                                  f"{ours[0] / peer[0]:.1f}x CPU",
                       goal_ratio=FLAT_GOAL,
                       goal=f"memory ratio flat with size (<= {FLAT_GOAL}x the 1x ratio)", load=load,
                       row=GROWTH_ROWS.get(label, ""), scale=scale,
                       cell=f"{ours[1]:.0f} vs {peer[1]:.0f} MiB; {growth:.2f}x the 1x ratio")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
