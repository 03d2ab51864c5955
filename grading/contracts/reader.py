"""Reading an untrusted PDF or DOCX inside bounds: a child process with a CPU and memory limit.

A crafted file costs its sender a few kilobytes and its reader whatever the parser spends on it: a DOCX whose
``word/document.xml`` inflates to 42 MB, a PDF of 100,000 pages sharing one content stream, a PDF stream that
inflates to 400 MB. So the parsers (pypdf, python-docx) never run in the web worker or the command's process:
:func:`read_units` starts ``python -m grading.contracts.reader``, which sets its own ``RLIMIT_CPU`` and
``RLIMIT_AS`` before it reads a byte, parses the file from stdin and answers JSON on stdout. Whatever happens in
there (a parser's exception, a memory error, the CPU limit's signal, a wall-clock timeout) comes back as
:class:`DocumentRefused` with the reason in words, and the process that asked keeps its memory.

Before python-docx opens a DOCX, every part of the ZIP is checked: its declared size, its compression ratio, and
its actual inflated size, streamed in chunks and stopped at the cap (a declared size can lie).

This module imports no Django: the child runs it on its own.
"""

from __future__ import annotations

import io
import json
import resource
import signal
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 1 << 16
# Below this many inflated bytes a part's ratio is not checked: a small, highly repetitive part is normal.
RATIO_FLOOR = 1_000_000


class DocumentRefused(ValueError):
    """The file cannot be imported; the message says why in words (the caller prefixes the file's name)."""


@dataclass(frozen=True)
class ReadBounds:
    """What reading one file may cost: CPU seconds and address space of the child, and a DOCX's inflated parts."""

    seconds: int = 20
    memory_mb: int = 512
    docx_inflated_bytes: int = 25_000_000  # all parts of the archive together
    docx_ratio: int = 100  # inflated / compressed, for any part above RATIO_FLOOR


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n:,} bytes"


# --------------------------------------------------------------------------- DOCX: the ZIP, part by part


def docx_check(data: bytes, *, bounds: ReadBounds) -> None:
    """Refuse a DOCX whose parts inflate past the caps, naming the part; declared sizes first, then actual ones."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise DocumentRefused(f"a damaged ZIP archive, not a readable DOCX ({exc})") from exc
    limit = bounds.docx_inflated_bytes
    declared = 0
    for info in infos:
        declared += info.file_size
        _check_part(info.filename, info.file_size, info.compress_size, bounds=bounds, total=declared,
                    what="declares")
    total = 0
    for info in infos:
        inflated = 0
        try:
            with archive.open(info) as part:
                # zipfile stops at the declared size; reading one byte past it still proves a lie when the
                # stream holds more (the CRC check at the end fails and names the part).
                while chunk := part.read(CHUNK):
                    inflated += len(chunk)
                    total += len(chunk)
                    if total > limit or (inflated > RATIO_FLOOR
                                         and inflated > bounds.docx_ratio * max(info.compress_size, 1)):
                        _check_part(info.filename, inflated, info.compress_size, bounds=bounds, total=total,
                                    what="inflates to")
        except DocumentRefused:
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, OSError, EOFError,
                RuntimeError) as exc:  # RuntimeError: an encrypted member
            raise DocumentRefused(f"a damaged DOCX: part {info.filename} cannot be read ({exc})") from exc


def _check_part(name: str, size: int, compressed: int, *, bounds: ReadBounds, total: int, what: str) -> None:
    if size > RATIO_FLOOR and size > bounds.docx_ratio * max(compressed, 1):
        raise DocumentRefused(
            f"part {name} {what} {_size(size)} from {_size(compressed)} (more than {bounds.docx_ratio} times "
            "its compressed size): a decompression bomb, not a contract")
    if total > bounds.docx_inflated_bytes:
        raise DocumentRefused(
            f"part {name} {what} {_size(size)}, which takes the DOCX past {_size(bounds.docx_inflated_bytes)} "
            "uncompressed (setting CONTRACT_DOCX_MAX_INFLATED_BYTES)")


def _docx_paragraphs(data: bytes, *, bounds: ReadBounds) -> list[str]:
    # local import: python-docx costs ~55 ms to import; only a .docx contract is read with it
    import docx
    from docx.table import Table

    docx_check(data, bounds=bounds)
    try:
        document = docx.Document(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors, PackageNotFoundError ...
        raise DocumentRefused(f"a damaged DOCX that cannot be read ({type(exc).__name__}: {exc})") from exc
    paragraphs: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                for cell in row.cells:
                    paragraphs.extend(p.text for p in cell.paragraphs)
        else:
            paragraphs.append(block.text)
    return paragraphs


# --------------------------------------------------------------------------- PDF


def _pdf_pages(data: bytes, *, max_units: int) -> list[str]:
    # local import: pypdf costs ~0.15 s to import; only a PDF contract is read with it
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data))
        # Encrypted with an owner password only, a PDF opens in any reader: so it does here. A user password is a
        # lock this product must not pick.
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentRefused("the PDF is encrypted with a password: remove the password, then import it")
        if len(reader.pages) > max_units:
            raise DocumentRefused(f"too long ({len(reader.pages)} pages; the limit is {max_units}, setting "
                                  "CONTRACT_MAX_UNITS)")
        return [page.extract_text() or "" for page in reader.pages]
    except (DocumentRefused, MemoryError):
        raise
    except (FileNotDecryptedError, DependencyError) as exc:
        raise DocumentRefused(f"the PDF is encrypted and cannot be opened ({exc})") from exc
    except LimitReachedError as exc:
        raise DocumentRefused(f"a PDF that exceeds the reader's limits ({exc})") from exc
    except Exception as exc:  # pypdf on crafted bytes raises its own errors and Python's (KeyError, RecursionError..)
        raise DocumentRefused(f"a damaged PDF that cannot be read ({type(exc).__name__}: {exc})") from exc


def units_in_process(kind: str, data: bytes, *, max_units: int, bounds: ReadBounds) -> list[str]:
    """The units of a PDF (pages) or DOCX (paragraphs), read here and now: only the bounded child calls this."""
    if kind == "pdf":
        return _pdf_pages(data, max_units=max_units)
    if kind == "docx":
        return _docx_paragraphs(data, bounds=bounds)
    raise ValueError(f"no bounded reader for {kind!r}")


# --------------------------------------------------------------------------- the child and its parent


def read_units(kind: str, data: bytes, *, max_units: int, bounds: ReadBounds) -> list[str]:
    """The units of a PDF or DOCX read in a child process within ``bounds``; DocumentRefused when it cannot be."""
    name = {"pdf": "PDF", "docx": "DOCX"}[kind]
    over_time = (f"reading this {name} took more than {bounds.seconds} s of processing (setting "
                 "CONTRACT_READ_SECONDS): a file built to be expensive, or far larger than a contract")
    over_memory = (f"reading this {name} needs more than {bounds.memory_mb} MB of memory (setting "
                   "CONTRACT_READ_MEMORY_MB): a file built to be expensive, or far larger than a contract")
    command = [sys.executable, "-m", "grading.contracts.reader", kind, str(max_units), str(bounds.seconds),
               str(bounds.memory_mb), str(bounds.docx_inflated_bytes), str(bounds.docx_ratio)]
    try:
        # The wall clock bounds a child starved of CPU by a busy machine; the CPU limit one that spins.
        done = subprocess.run(command, input=data, capture_output=True, cwd=ROOT,
                              timeout=bounds.seconds * 1.5 + 5, check=False)
    except subprocess.TimeoutExpired:
        raise DocumentRefused(over_time) from None
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise DocumentRefused(over_time)
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        if b"MemoryError" in done.stderr:
            raise DocumentRefused(over_memory)
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise DocumentRefused(f"this {name} could not be read ({last[0][:200]})")
    if answer.get("memory"):
        raise DocumentRefused(over_memory)
    if "refused" in answer:
        raise DocumentRefused(str(answer["refused"]))
    return [str(unit) for unit in answer["units"]]


def _near_limit(limit: int) -> bool:
    """Whether this process's peak address space came within 10% of ``limit`` (Linux; False elsewhere)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("VmPeak:"):
            return int(line.split()[1]) * 1024 > limit * 0.9
    return False


def _child(argv: list[str]) -> int:
    kind, max_units, seconds, memory_mb, inflated, ratio = argv
    bounds = ReadBounds(seconds=int(seconds), memory_mb=int(memory_mb), docx_inflated_bytes=int(inflated),
                        docx_ratio=int(ratio))
    # The soft CPU limit sends SIGXCPU (whose default action ends the process); the hard one a second later, SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (bounds.seconds, bounds.seconds + 1))
    memory = bounds.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    data = sys.stdin.buffer.read()
    try:
        answer: dict[str, object] = {"units": units_in_process(kind, data, max_units=int(max_units), bounds=bounds)}
    except DocumentRefused as exc:
        # libxml2 reports a failed allocation as a parse error ("unknown error"): a failure that came with the
        # address space at its limit is the limit's doing, not the file's syntax.
        answer = {"memory": True} if _near_limit(memory) else {"refused": str(exc)}
    except MemoryError:
        answer = {"memory": True}
    except Exception as exc:  # the parsers' own bugs on crafted bytes: still this file's refusal, never a crash
        answer = {"memory": True} if _near_limit(memory) else {
            "refused": f"the file could not be read ({type(exc).__name__}: {str(exc)[:200]})"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
