import os

from django.core.wsgi import get_wsgi_application

from reviewapp.startup import starting

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
with starting():
    application = get_wsgi_application()

    # Django imports the URL config, builds its reverse tables and compiles the layout on the first request of
    # each process; doing it here means gunicorn --preload does it once in the master, so forked workers inherit
    # it (reviewapp.core.warmup: what is shared is built here, each page's own view and templates are not).
    # The Celery app is not loaded here: a web process needs it only to send a task (a launch, an audit), and
    # loads it then (~45 ms, once per worker) rather than making every start pay for it.
    from reviewapp.core.warmup import warm_up

    warm_up()
