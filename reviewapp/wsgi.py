import os

from django.core.wsgi import get_wsgi_application

from reviewapp.startup import starting

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
with starting():
    application = get_wsgi_application()

    # Django imports the URL config, builds its reverse tables and compiles templates on the first request of
    # each process; doing it here means gunicorn --preload does it once in the master, so forked workers answer
    # their first request warm (reviewapp.core.warmup).
    from reviewapp.core.warmup import warm_up

    warm_up()

    # The web process sends tasks (a launched run, an audit): its Celery app is loaded here, in the --preload
    # master, not by each forked worker on its first launch. Commands and tests load it only with a task.
    import reviewapp.celery  # noqa: F401
