"""The one settings file. Every value comes from the environment.

Embedded defaults run on one machine with no servers (SQLite, a filesystem
Celery broker, local-memory cache, the local ONNX model); DATABASE_URL and
REDIS_URL move the same code onto PostgreSQL and Redis.
"""

from __future__ import annotations

from pathlib import Path

from reviewapp.config import (
    ConfigError,
    data_dir,
    database_config,
    env_bool,
    env_int,
    env_list,
    env_str,
    redis_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and env_bool("REQUIRE_SECRET_KEY", False):
        raise ConfigError("SECRET_KEY is empty; set a long random value in the environment")
    # Development fallback; production sets REQUIRE_SECRET_KEY=1 so this cannot ship.
    SECRET_KEY = "insecure-development-key-change-me-0123456789-abcdefghijklmnopqrstuvwxyz"  # noqa: S105
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

DATA_DIR = data_dir(env_str("DATA_DIR"), base_dir=BASE_DIR)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "reviewapp.core",
    "reviewapp.review",
    "reviewapp.providers",
    "benchmarks",
    "grading",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "reviewapp.urls"
WSGI_APPLICATION = "reviewapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reviewapp.core.access.role_context",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
DATABASES = {"default": database_config(DATABASE_URL, base_dir=BASE_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASE_ROUTERS = ["reviewapp.db_routers.TablelessModelsRouter"]

REDIS_URL = redis_url(env_str("REDIS_URL"))
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Failed logins allowed per username+address within the window before refusal.
LOGIN_RATE_LIMIT = env_int("LOGIN_RATE_LIMIT", 10)
LOGIN_RATE_WINDOW_SECONDS = env_int("LOGIN_RATE_WINDOW_SECONDS", 300)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise expects it even before collectstatic
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # htmx comes from its pinned npm package (package-lock.json), not a hand copy.
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if env_bool("STATIC_MANIFEST", not DEBUG and env_bool("PRODUCTION", False))
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

# Uploads (pasted runs, statute files) are bounded; larger ones are refused with a message.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 20 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE

PRODUCTION = env_bool("PRODUCTION", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Legal AI evaluation API",
    "DESCRIPTION": "Statute relevance benchmark, blinded human review, CUAD clause-extraction grader.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs page map every endpoint: signed-in users only (tests/trust matrix).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Schema completeness is tested by tests/reviewapp/core (the schema must generate); the deploy
    # check stays about deployment settings.
    "ENABLE_DJANGO_DEPLOY_CHECK": False,
}

# Celery: a broker that needs no server by default (kombu's filesystem
# transport under var/), Redis when REDIS_URL is set.
CELERY_BROKER_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "visibility_timeout": 3600}
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
    # kombu's filesystem transport lists its folders on first publish; create them up front.
    for _folder in ("queue", "processed", "control"):
        (CELERY_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# One queue name for the web process and its workers; parallel test processes each use their own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Provider keys live in the environment of the server only; nothing else
# reads os.environ for them, and they never enter the database or a page.
PROVIDER_KEYS = {
    "openrouter": env_str("OPENROUTER_API_KEY"),
    "openai_compatible": env_str("OPENAI_COMPATIBLE_API_KEY"),
    "anthropic": env_str("ANTHROPIC_API_KEY"),
}
OPENAI_COMPATIBLE_BASE_URL = env_str("OPENAI_COMPATIBLE_BASE_URL", "https://openrouter.ai/api/v1")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
PROVIDER_TIMEOUT_SECONDS = env_int("PROVIDER_TIMEOUT_SECONDS", 60)

LOG_LEVEL = env_str("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # httpx logs every request line at INFO; the receipt ledger already records each request.
    "loggers": {"httpx": {"level": env_str("HTTPX_LOG_LEVEL", "WARNING")}},
}
