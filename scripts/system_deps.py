"""The Debian packages that the tests (and the PDF summaries) call, and which of them this machine lacks.

`make test` runs `make system-deps`, which installs what this prints: the README's test command must pass on a
fresh machine that has only Python, Node.js and the services, not only through .ci/run. A test
(tests/scripts/test_system_deps.py) reads every executable the tests start and checks each is listed here.

    python scripts/system_deps.py            # the packages to install, space-separated (empty: nothing missing)
    python scripts/system_deps.py --check    # exit 1 naming what is missing
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Where a root shell finds programs that are not on a plain user's PATH (nginx lives in /usr/sbin).
_SBIN = (Path("/usr/sbin"), Path("/sbin"))


@dataclass(frozen=True)
class Need:
    """One thing the tests call: an executable on PATH, or a shared library (`lib:` soname prefix)."""

    name: str
    package: str
    why: str


NEEDS: tuple[Need, ...] = (
    Need("chromium", "chromium", "the browser tests drive Debian's chromium through Playwright"),
    Need("pdftotext", "poppler-utils", "the summary PDFs are read back as text"),
    Need("pdfinfo", "poppler-utils", "the summary PDFs' page count and size"),
    Need("pdftoppm", "poppler-utils", "the summary PDF drawn as a picture"),
    Need("nginx", "nginx-light", "the slow-client test runs the shipped proxy configuration"),
    Need("redis-server", "redis-server", "the fault tests start Redis servers of their own to stop"),
    Need("mount", "mount", "the fault tests fill a tiny tmpfs to stand for a full var/"),
    Need("umount", "mount", "the fault tests unmount that tmpfs afterwards"),
    Need("lib:libpango-1.0.so", "libpango-1.0-0", "WeasyPrint's text layout for the PDF summaries"),
    Need("lib:libpangoft2-1.0.so", "libpangoft2-1.0-0", "WeasyPrint's fonts for the PDF summaries"),
)


def _shared_libraries() -> str:
    try:
        return subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return ""


def is_present(need: Need, *, libraries: str) -> bool:
    if need.name.startswith("lib:"):
        return need.name.removeprefix("lib:") in libraries
    return shutil.which(need.name) is not None or any((folder / need.name).exists() for folder in _SBIN)


def missing_packages(needs: tuple[Need, ...] = NEEDS) -> list[str]:
    """The Debian packages to install, each once, in the order of NEEDS."""
    libraries = _shared_libraries() if any(n.name.startswith("lib:") for n in needs) else ""
    packages: list[str] = []
    for need in needs:
        if not is_present(need, libraries=libraries) and need.package not in packages:
            packages.append(need.package)
    return packages


def main(argv: list[str]) -> int:
    packages = missing_packages()
    if "--check" in argv:
        for need in NEEDS:
            if need.package in packages:
                print(f"missing: {need.name} (Debian package {need.package}): {need.why}", file=sys.stderr)
        return 1 if packages else 0
    print(" ".join(packages))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
