"""The fault matrix's figures, kept in var/fault-matrix.json (one entry per cell and set of timeouts) so a run with
the production timeouts (RECOVERY_TIMEOUTS=production) leaves the table the README and the release notes quote."""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime

from tests.conftest import REPO_ROOT

MATRIX_FILE = REPO_ROOT / "var" / "fault-matrix.json"


def sent_twice(server) -> int:
    """Requests the simulated model server received more than once (each repeat counted), from its own log."""
    return sum(count - 1 for count in server.counts.values() if count > 1)


def cell_record(cell: str, *, timeouts: str, takeover: float | None, finished: float, sent_twice: int,
                state: str, note: str = "") -> None:
    """Add or replace one cell's figures (seconds from the fault; takeover None: nothing had to be taken over)."""
    MATRIX_FILE.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest workers may record at once: one read-modify-write at a time.
    with open(MATRIX_FILE.with_name(".fault-matrix.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cells = json.loads(MATRIX_FILE.read_text())
        except (OSError, ValueError):
            cells = {}
        _write(cells, cell, timeouts=timeouts, takeover=takeover, finished=finished, sent_twice=sent_twice,
               state=state, note=note)


def _write(cells: dict, cell: str, *, timeouts: str, takeover: float | None, finished: float, sent_twice: int,
           state: str, note: str) -> None:
    production = timeouts.startswith("production")
    cells[f"{cell} [{'production' if production else 'short'}]"] = {
        "cell": cell, "timeouts": timeouts, "fault_to_takeover_s": None if takeover is None else round(takeover, 1),
        "fault_to_finished_s": round(finished, 1), "sent_twice": sent_twice, "final_state": state, "note": note,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "pid": os.getpid(),
    }
    temporary = MATRIX_FILE.with_name(f".{MATRIX_FILE.name}.{os.getpid()}")
    temporary.write_text(json.dumps(cells, indent=1, sort_keys=True))
    os.replace(temporary, MATRIX_FILE)
