"""The Django project: settings, URLs, Celery, WSGI/ASGI. Shared layers in core/, review/, providers/."""

import os

# One BLAS thread per process, set before anything loads numpy: every process of the project (gunicorn
# workers, Celery workers, management commands) runs beside others on few cores, and the matrix products it
# does (bootstrap draw counts x tallies) are a few milliseconds. A second BLAS thread there only waits for a
# busy core: on a loaded 2-core machine it tripled the CPU time of a leaderboard regrade. An operator's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The Celery app (reviewapp/celery.py) is not imported here, as Django's Celery recipe does: importing Celery
# is ~0.1-0.2 s of every process, and most (a management command, a test process) never send a task. Tasks are
# @shared_task; reviewapp.core.jobs.celery_app loads the app (settings.JOB_CELERY_APP) before a job is sent or
# the workers are asked, which makes it Celery's current app; `celery -A reviewapp` finds it as
# reviewapp.celery.app.
