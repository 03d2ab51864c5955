"""How an eCFR title's reading and import grow with the file: 1x, 10x and 100x (2, 20 and 200 MB by default).

A synthetic bulk title (GPO's layout: a header, chapters, parts with their authority and source notes, subparts
and DIV8 sections of several paragraphs) is written at each size. Each figure is one whole process (a fresh
interpreter, as a user's command), its CPU time and peak RSS:

- the product's reading, ``ecfr_xml.parse`` (the file read part by part with lxml iterparse), beside the peer: a
  plain lxml iterparse of the same file that takes each DIV8 section's text and clears it, nothing kept;
- the product's import, ``manage.py import_corpus`` into a fresh migrated SQLite database (parse, provisions and
  passages written in batches), at the sizes up to ``BENCH_ECFR_IMPORT_MAX_MB`` (20 MB by default).

Ours and the peer are run alternately, ``BENCH_ECFR_REPEATS`` times each (median). ``parse`` returns every
section at once (a ``ParsedSource``), so its peak grows with the text; the import reads the file as a stream
(``ecfr_xml.read``) and writes in batches, so its peak does not (``bench_import_growth`` has every format's
growth). Prints figures, asserts nothing.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.figures import load_average, report  # noqa: E402

BENCH = Path(__file__).stem
SIZES_MB = tuple(int(n) for n in os.environ.get("BENCH_ECFR_SIZES_MB", "2,20,200").split(","))
IMPORT_MAX_MB = int(os.environ.get("BENCH_ECFR_IMPORT_MAX_MB", "20"))
REPEATS = int(os.environ.get("BENCH_ECFR_REPEATS", "3"))

PARAGRAPH = ("(a) Each person subject to this part shall keep the records required by this section for three years "
             "after the date of the transaction and make them available to the Administrator on request. ")


def _part(n: int) -> str:
    sections = "".join(
        f'<DIV8 N="§ {n}.{s}" TYPE="SECTION"><HEAD>§ {n}.{s}   Records and reports {s}.</HEAD>'
        + "".join(f"<P>{PARAGRAPH * 2}<I>See</I> § {n}.{s}.</P>" for _ in range(4))
        + f"<CITA>[12 FR {n}, Jan. 1, 2020]</CITA></DIV8>\n" for s in range(1, 11))
    return (f'<DIV5 N="{n}" TYPE="PART"><HEAD>PART {n}—RECORDS</HEAD>'
            f"<AUTH><HED>Authority:</HED><PSPACE>5 U.S.C. 552; 12 U.S.C. {n}.</PSPACE></AUTH>"
            f"<SOURCE><HED>Source:</HED><PSPACE>12 FR {n}, Jan. 1, 2020.</PSPACE></SOURCE>"
            f'<DIV6 N="A" TYPE="SUBPART"><HEAD>Subpart A—General</HEAD>{sections}</DIV6></DIV5>\n')


def _write_title(path: Path, megabytes: int) -> int:
    """A bulk title of about ``megabytes`` MB; returns its number of sections."""
    part_bytes = len(_part(1000).encode())
    parts = max(1, megabytes * 1024 * 1024 // part_bytes)
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<DLPSTEXTCLASS><HEADER><AMDDATE>Dec. 29, 2022</AMDDATE>'
                  '</HEADER><TEXT><BODY><ECFRBRWS><DIV1 N="12" TYPE="TITLE"><HEAD>Title 12—Banks and Banking</HEAD>'
                  '<DIV3 N="I" TYPE="CHAPTER"><HEAD>CHAPTER I</HEAD>\n')
        for n in range(1000, 1000 + parts):
            out.write(_part(n))
        out.write("</DIV3></DIV1></ECFRBRWS></BODY></TEXT></DLPSTEXTCLASS>\n")
    return parts * 10


OURS_PARSE = textwrap.dedent("""
    import sys
    from benchmarks.corpus.formats import ecfr_xml
    parsed = ecfr_xml.parse(open(sys.argv[1], "rb").read(), filename="title.xml")
    print(len(parsed.provisions))
""")
PEER_PARSE = textwrap.dedent("""
    import sys
    from lxml import etree
    count = 0
    for _, elem in etree.iterparse(sys.argv[1], events=("end",), tag="DIV8"):
        text = " ".join(" ".join(elem.itertext()).split())
        count += 1
        elem.clear(keep_tail=True)
        while elem.getprevious() is not None:
            del elem.getparent()[0]
    print(count)
""")
MEASURE = textwrap.dedent("""
    import resource, subprocess, sys, time
    started = time.perf_counter()
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
""")


def _measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True,
                         env=env, cwd=REPO).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def _medians(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))  # type: ignore[return-value]


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DJANGO_SETTINGS_MODULE": "reviewapp.settings"}
    env.pop("REDIS_URL", None)
    with tempfile.TemporaryDirectory(prefix="bench_ecfr-") as tmp:
        directory = Path(tmp)
        template = directory / "migrated.sqlite3"
        migrate_env = {**env, "DATABASE_URL": f"sqlite:///{template}"}
        subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], check=True, env=migrate_env,
                       cwd=REPO)
        rows: dict[int, dict[str, tuple[float, float, float]]] = {}
        for megabytes in SIZES_MB:
            path = directory / f"ECFR-title12-{megabytes}mb.xml"
            sections = _write_title(path, megabytes)
            size = path.stat().st_size / 1024 / 1024
            ours_runs, peer_runs, import_runs = [], [], []
            load = load_average()
            for attempt in range(REPEATS):
                ours_runs.append(_measure([sys.executable, "-c", OURS_PARSE, str(path)], env))
                peer_runs.append(_measure([sys.executable, "-c", PEER_PARSE, str(path)], env))
                if megabytes <= IMPORT_MAX_MB:
                    database = directory / f"import-{attempt}.sqlite3"
                    shutil.copy(template, database)
                    import_runs.append(_measure([sys.executable, "manage.py", "import_corpus", str(path)],
                                                {**env, "DATABASE_URL": f"sqlite:///{database}"}))
                    database.unlink()
            load = (load + load_average()) / 2
            ours, peer = _medians(ours_runs), _medians(peer_runs)
            rows[megabytes] = {"parse": ours, "peer": peer}
            report(bench=BENCH, what=f"eCFR title read, {size:.0f} MB ({sections:,} sections), one process",
                   ours=f"CPU {ours[1]:.2f} s, peak {ours[2]:.0f} MiB",
                   peer=f"plain lxml iterparse CPU {peer[1]:.2f} s, peak {peer[2]:.0f} MiB",
                   ratio=ours[1] / peer[1], ratio_text=f"{ours[1] / peer[1]:.2f}x CPU, {ours[2] / peer[2]:.2f}x "
                                                       f"memory, peak {ours[2] / size:.1f}x the file",
                   load=load)
            if import_runs:
                imported = _medians(import_runs)
                rows[megabytes]["import"] = imported
                report(bench=BENCH, what=f"eCFR title import (import_corpus, SQLite), {size:.0f} MB "
                                         f"({sections:,} sections), one process",
                       ours=f"{imported[0]:.1f} s (CPU {imported[1]:.2f} s), peak {imported[2]:.0f} MiB",
                       peer=f"plain lxml iterparse CPU {peer[1]:.2f} s, peak {peer[2]:.0f} MiB",
                       ratio=imported[1] / peer[1],
                       ratio_text=f"{imported[1] / peer[1]:.2f}x CPU, {imported[2] / peer[2]:.2f}x memory, peak "
                                  f"{imported[2] / size:.1f}x the file", load=load)
        base = min(SIZES_MB)
        for megabytes in SIZES_MB:
            if megabytes == base:
                continue
            for key, label in (("parse", "read"), ("import", "import")):
                if key not in rows[megabytes] or key not in rows[base]:
                    continue
                now, then = rows[megabytes][key], rows[base][key]
                work = megabytes / base
                report(bench=BENCH, what=f"eCFR title {label}, {megabytes} MB against {base} MB ({work:.0f}x the "
                                         "work)",
                       ours=f"CPU {now[1]:.2f} s, peak {now[2]:.0f} MiB",
                       peer=f"{base} MB: CPU {then[1]:.2f} s, peak {then[2]:.0f} MiB",
                       ratio=now[1] / then[1] / work,
                       ratio_text=f"{now[1] / then[1]:.1f}x CPU, {now[2] / then[2]:.1f}x memory for {work:.0f}x "
                                  "the work",
                       goal_ratio=1.0, goal="CPU grows no faster than the file (<= 1 per unit of work)")


if __name__ == "__main__":
    main()
