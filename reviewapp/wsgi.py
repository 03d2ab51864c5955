import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
application = get_wsgi_application()

# Django resolves the URL config on the first request; importing it here means gunicorn --preload
# loads every view once in the master, so forked workers answer their first request warm.
import reviewapp.urls  # noqa: E402, F401
