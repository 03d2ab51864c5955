"""The Django project: settings, URLs, Celery, WSGI/ASGI. Shared layers in core/, review/, providers/."""

import os

# One BLAS thread per process, set before anything loads numpy: every process of the project (gunicorn
# workers, Celery workers, management commands) runs beside others on few cores, and the matrix products it
# does (bootstrap draw counts x tallies) are a few milliseconds. A second BLAS thread there only waits for a
# busy core: on a loaded 2-core machine it tripled the CPU time of a leaderboard regrade. An operator's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from reviewapp.celery import app as celery_app  # after the BLAS setting, which must come first

__all__ = ["celery_app"]
