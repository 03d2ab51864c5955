"""The one settings file. Every value comes from the environment.

Embedded defaults run on one machine with no servers (SQLite, a filesystem
Celery broker, local-memory cache, the local ONNX model); DATABASE_URL and
REDIS_URL move the same code onto PostgreSQL and Redis.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from reviewapp.config import (
    ConfigError,
    data_dir,
    database_config,
    env_bool,
    env_int,
    env_list,
    env_str,
    redis_cache_url,
    redis_url,
    without_postgres_fields,
)
from reviewapp.sso.config import csp_allowing_idp, oidc_settings

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
PRODUCTION = env_bool("PRODUCTION", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    # PRODUCTION alone is enough to refuse: the public development key below signs sessions and CSRF tokens,
    # and a deployment that forgot REQUIRE_SECRET_KEY ran on it silently.
    if PRODUCTION or (not DEBUG and env_bool("REQUIRE_SECRET_KEY", False)):
        raise ConfigError("SECRET_KEY is empty; set a long random value in the environment (PRODUCTION=1 needs it)")
    # Development fallback only (PRODUCTION=1 refuses to start without a key, above).
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
    # Before staticfiles: runserver leaves static files to WhiteNoise, whose lookup answers a "../" path
    # with a 404 (Django's own dev handler let the SuspiciousFileOperation through as a 500).
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    # "rest_framework" is not an app here: no browsable API, no DRF templates; as an app its template tags were
    # imported by every template engine start (DRF, psycopg, requests, pygments: ~0.4 s per process).
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "reviewapp.core",
    "reviewapp.review",
    "reviewapp.providers",
    "reviewapp.jobs",
    "reviewapp.notifications",
    "reviewapp.sso",
    "benchmarks",
    "grading",
]

MIDDLEWARE = [
    # First: a body over the limit is refused before sessions, CSRF (which reads request.POST and so spools
    # uploads to disk) or authentication touch it, for anonymous and signed-in callers alike.
    "reviewapp.core.http.middleware.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A lost database or Redis connection answers 503 with the reason (process_exception), not a bare 500.
    "reviewapp.core.http.middleware.OutageMiddleware",
    "reviewapp.core.http.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "reviewapp.core.auth.signin.SigninMethodMiddleware",
    "reviewapp.core.http.middleware.DebugNotFoundMiddleware",
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
                "reviewapp.core.auth.roles.role_context",
                "reviewapp.sso.views.sso_context",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
DATABASES = {"default": database_config(DATABASE_URL, base_dir=BASE_DIR, password=env_str("DATABASE_PASSWORD"))}
without_postgres_fields(DATABASES["default"])  # on SQLite DRF then loads no psycopg (see the function)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASE_ROUTERS = ["reviewapp.db_routers.TablelessModelsRouter"]

# One Redis server, two databases: the Celery broker in REDIS_URL's (below), the cache in the next one
# (redis://redis:6379/0 -> /1), so that flushing or evicting the cache never touches a queued message.
REDIS_URL = redis_url(env_str("REDIS_URL"), password=env_str("REDIS_PASSWORD"))
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_cache_url(REDIS_URL),
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
elif PRODUCTION:
    # The login limit counts in the cache: a per-process cache gives each gunicorn worker its own count, so the
    # limit would be multiplied by the number of workers (and reset by every restart).
    raise ConfigError("PRODUCTION=1 needs a shared cache for the login limit: set REDIS_URL (a per-process "
                      "local-memory cache counts each worker's attempts separately)")
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's model backend with the own and role permissions read in one query (core/auth/roles.py).
AUTHENTICATION_BACKENDS = ["reviewapp.core.auth.roles.RolePermissionBackend"]
# Single sign-on through the organisation's identity provider (OpenID Connect; reviewapp/sso), on when
# OIDC_ISSUER is set: OIDC_CLIENT_ID, OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE), OIDC_ROLE_GROUPS
# ("reviewer=Lawyers;stakeholder=Partners;admin=Review admins"), OIDC_GROUPS_CLAIM (groups), OIDC_SCOPES,
# OIDC_DEFAULT_ROLES, OIDC_HOSTED_DOMAIN, OIDC_PROVIDER_NAME, OIDC_*_ENDPOINT (else discovery). Local passwords
# stay. The redirect URI to register at the IdP is <site>/accounts/oidc/callback/.
_oidc = oidc_settings(env_str, env_int)
globals().update(_oidc.as_django_settings())
# The names set just above, declared for the type checker (django-stubs reads settings from this module's types).
OIDC_ENABLED: bool
OIDC_ISSUER: str
OIDC_RP_CLIENT_ID: str
OIDC_RP_CLIENT_SECRET: str
OIDC_RP_SCOPES: str
OIDC_GROUPS_CLAIM: str
OIDC_ROLE_GROUPS: dict[str, tuple[str, ...]]
OIDC_DEFAULT_ROLES: tuple[str, ...]
OIDC_HOSTED_DOMAIN: str
OIDC_PROVIDER_NAME: str
OIDC_RP_SIGN_ALGO: str
OIDC_TIMEOUT: int
OIDC_STORE_ID_TOKEN = True  # the sign-out's id_token_hint, so the IdP ends its session too
OIDC_CLOCK_SKEW_SECONDS = env_int("OIDC_CLOCK_SKEW_SECONDS", 60)
if _oidc.enabled:
    AUTHENTICATION_BACKENDS.append("reviewapp.sso.backend.OidcBackend")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Failed logins allowed per username+address within the window before refusal, and per username from all
# addresses (guessing spread over many addresses; higher, as reaching it locks the account for its owner too).
LOGIN_RATE_LIMIT = env_int("LOGIN_RATE_LIMIT", 10)
LOGIN_ACCOUNT_RATE_LIMIT = env_int("LOGIN_ACCOUNT_RATE_LIMIT", 50)
# How many reverse proxies in front of the app append to X-Forwarded-For (0: clients connect directly and
# REMOTE_ADDR is their address). Only then is the header believed, and only the entries the proxies wrote.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
LOGIN_RATE_WINDOW_SECONDS = env_int("LOGIN_RATE_WINDOW_SECONDS", 300)
# How long an API token lives (default 30 days); a password change ends it sooner.
API_TOKEN_TTL_SECONDS = env_int("API_TOKEN_TTL_SECONDS", 30 * 24 * 3600)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The image collects its static files outside var/ (STATIC_ROOT=/app/static): var/ is a volume that outlives
# the image, and files collected into it would stay those of the first image.
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
# whitenoise expects it even before collectstatic; a var/ that is full or read-only must not stop beat and the
# workers from starting (they serve no static file): whitenoise then only warns that the folder is missing.
with contextlib.suppress(OSError):
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # htmx and Swagger UI come from their pinned npm packages (package-lock.json), not hand copies or a CDN.
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
    ("vendor/swagger-ui", BASE_DIR / "node_modules" / "swagger-ui-dist"),
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
# Whole request bodies (a 20 MB run file plus its multipart envelope and form fields) are refused above this
# with a 413 before anything reads them (reviewapp.core.http.middleware.RequestBodyLimitMiddleware).
REQUEST_BODY_MAX_BYTES = env_int("REQUEST_BODY_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE + 1024 * 1024)
# A firm's contract files (grading.contracts): one file at most this many bytes, and this many pages (PDF),
# paragraphs (DOCX) or lines (text, HTML); larger files are refused by name, the rest of a batch still imports.
CONTRACT_MAX_BYTES = env_int("CONTRACT_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE)
CONTRACT_MAX_UNITS = env_int("CONTRACT_MAX_UNITS", 100_000)
# PDF and DOCX files are parsed in a child process limited to this much CPU time and address space, and a DOCX's
# parts may inflate to this much in all, none more than CONTRACT_DOCX_MAX_RATIO times its compressed size
# (grading.contracts.reader); a batch stops reading new files after CONTRACT_BATCH_SECONDS (each later file is
# named as not read) so that a request ends before the web server's timeout.
CONTRACT_READ_SECONDS = env_int("CONTRACT_READ_SECONDS", 20)
CONTRACT_READ_MEMORY_MB = env_int("CONTRACT_READ_MEMORY_MB", 512)
CONTRACT_DOCX_MAX_INFLATED_BYTES = env_int("CONTRACT_DOCX_MAX_INFLATED_BYTES", 25_000_000)
CONTRACT_DOCX_MAX_RATIO = env_int("CONTRACT_DOCX_MAX_RATIO", 100)
CONTRACT_BATCH_SECONDS = env_int("CONTRACT_BATCH_SECONDS", 20)
# Request JSON (API bodies, pasted runs, pool items, label imports): bounded in bytes and in nesting depth
# (reviewapp.core.http.json_input); deeper documents are refused with a 400 instead of a RecursionError.
JSON_MAX_BYTES = env_int("JSON_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE)
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 64)
# The API's list pages: ?limit above this is refused (400) rather than passed to the database.
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 1000)
# A reviewer's time spent (their day on /review/, the admins' time report): the time between two of their saves
# counts for the later one, but never more than this (a break counts as at most this much work).
REVIEW_IDLE_CAP_SECONDS = env_int("REVIEW_IDLE_CAP_SECONDS", 600)
if not 30 <= REVIEW_IDLE_CAP_SECONDS <= 4 * 3600:
    raise ConfigError(f"REVIEW_IDLE_CAP_SECONDS={REVIEW_IDLE_CAP_SECONDS} must be between 30 and 14400")
# How long a reviewer's set-password invitation link works (single use; a later one, a deactivation or the
# admin's "Revoke" ends it sooner).
INVITATION_TTL_SECONDS = env_int("INVITATION_TTL_SECONDS", 3 * 24 * 3600)

# Scripts from this origin only, and no inline script (page scripts are static files). Inline styles stay
# allowed: templates and Swagger UI set them, and they cannot run code.
CONTENT_SECURITY_POLICY = env_str(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)
CONTENT_SECURITY_POLICY = csp_allowing_idp(CONTENT_SECURITY_POLICY, _oidc)  # sign-out redirects to the IdP

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# How long a sign-in lasts (default 14 days, Django's); with SESSION_SAVE_EVERY_REQUEST=1 it is an idle timeout
# instead (each request pushes the expiry on). SESSION_EXPIRE_AT_BROWSER_CLOSE=1 ends it with the browser.
# Admins see and end a reviewer's sessions on /review/admin/reviewers/<id>/ (reviewapp/sso/sessions.py).
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 14 * 24 * 3600)
if not 60 <= SESSION_COOKIE_AGE <= 366 * 24 * 3600:
    raise ConfigError(f"SESSION_COOKIE_AGE={SESSION_COOKIE_AGE} must be between 60 seconds and a year")
SESSION_SAVE_EVERY_REQUEST = env_bool("SESSION_SAVE_EVERY_REQUEST", False)
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("SESSION_EXPIRE_AT_BROWSER_CLOSE", False)
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
        # Hashed, expiring, password-bound tokens each user makes for themself (reviewapp.core.auth.credentials).
        "reviewapp.core.auth.credentials.HashedTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only, for everyone and in every environment: no DRF browsable API. The API is documented by
    # its OpenAPI schema and the Swagger UI page (/api/v1/docs/), which pass axe like every other page;
    # the browsable API was a second, third-party UI (an unnamed menu button, no lang, low-contrast
    # links, unfocusable scroll regions) that no test, client or document of this project relied on.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # One JSON parser for every endpoint: size and depth bounded (reviewapp.core.http.json_input).
    "DEFAULT_PARSER_CLASSES": [
        "reviewapp.core.http.api_parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # List filters and pages are checked once, here, for every list endpoint (reviewapp.core.http.api_filters).
    "DEFAULT_FILTER_BACKENDS": ["reviewapp.core.http.api_filters.QueryFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "reviewapp.core.http.api_filters.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Legal AI evaluation API",
    "DESCRIPTION": "Statute relevance benchmark, blinded human review, CUAD clause-extraction grader.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Every integer path parameter is declared an id from 1 (reviewapp.core.http.api_filters).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "reviewapp.core.http.api_filters.declare_path_id_ranges"],
    # Loading it registers the token scheme (reviewapp.core.auth.schema), only when a schema is generated.
    "DEFAULT_GENERATOR_CLASS": "reviewapp.core.auth.schema.SchemaGenerator",
    # The schema and its docs page map every endpoint, admin and stakeholder fields included: readers of
    # reports only, never reviewers (reviewapp.core.auth.roles.CanViewReports).
    "SERVE_PERMISSIONS": ["reviewapp.core.auth.roles.CanViewReports"],
    # Swagger UI from the pinned npm package through static files: no CDN, works offline, fits the CSP.
    "SWAGGER_UI_DIST": f"/{STATIC_URL}vendor/swagger-ui",
    "SWAGGER_UI_FAVICON_HREF": f"/{STATIC_URL}vendor/swagger-ui/favicon-32x32.png",
    # No deep links: with them every operation's summary button holds a link (axe nested-interactive, which a
    # screen reader announces as one control); the operations stay reachable by Tab and by their tag heading.
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    # Schema completeness is tested by tests/reviewapp/core (the schema must generate); the deploy
    # check stays about deployment settings.
    "ENABLE_DJANGO_DEPLOY_CHECK": False,
    # The documented request bodies are JSON: a generated client then sends JSON (forms are still parsed).
    "PARSER_WHITELIST": ["reviewapp.core.http.api_parsers.BoundedJSONParser"],
}

# Celery: a broker that needs no server by default (kombu's filesystem
# transport under var/), Redis when REDIS_URL is set.
CELERY_BROKER_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # visibility_timeout is set below, from the jobs' stale timeout (JOB_* settings).
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {"socket_connect_timeout": 2}
else:
    # The filesystem transport ignores the host, but kombu warns "No hostname was supplied" on every
    # connection whose URL has none: name one, so the worker starts without a warning.
    CELERY_BROKER_URL = "filesystem://localhost/"
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
# Scale-out: a task is acknowledged when it ends (a killed worker's message goes back to the queue: Redis
# hands it to another worker after the visibility timeout), each worker reserves one task at a time, and
# every task is safe to deliver twice: it claims its job by a conditional UPDATE, so a second delivery of a
# job that is running (and still beating) or finished does nothing, and one of a job whose heartbeat is
# stale takes it over (the claim token makes the old execution write nothing).
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A lost broker connection must not cancel a running job: it holds its claim in the database and finishes;
# the redelivered copy of its message finds it running and does nothing. (Cancelling would throw the work
# away and leave its requests in flight "unknown".)
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A worker lost mid-task (a SIGKILLed pool child, SIGTERM to every process of a restart, out of memory): its
# message goes back to the queue rather than being acknowledged. A copy whose job was already claimed finds it
# running and does nothing (so no loop); one whose job was never claimed (the worker died between taking the
# message and claiming the job) runs it. A claimed job whose worker died is recovered by the sweeper below.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
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
# The base URL of a run is chosen per run (page, API, command); a provider's key goes only to the origin of its
# *_BASE_URL, to the origins listed here (e.g. "https://gateway.firm.example") and to this machine (127.0.0.1,
# localhost), so a URL typed in a form never carries the server's key to another host. Servers that need no
# key (Ollama, vLLM, llama.cpp, LM Studio) need nothing here.
OPENAI_COMPATIBLE_KEY_ORIGINS = env_list("OPENAI_COMPATIBLE_KEY_ORIGINS", [])
ANTHROPIC_KEY_ORIGINS = env_list("ANTHROPIC_KEY_ORIGINS", [])
# Origins whose OpenAI-compatible server takes a JSON schema as response_format {"type": "json_object", "schema":
# ...} (llama-cpp-python's server, `make model-server`) instead of OpenAI's {"type": "json_schema", "json_schema":
# {...}}, which such a server refuses (HTTP 422). `make demo` lists its own model server here.
OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS = env_list("OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS", [])
PROVIDER_TIMEOUT_SECONDS = env_int("PROVIDER_TIMEOUT_SECONDS", 60)

# Tracked jobs (reviewapp/core/jobs.py): a running job silent for longer than its stale timeout has lost its
# worker and may be taken over. A job on the local model beats every few seconds; one waiting on a remote
# provider may sit in a request for PROVIDER_TIMEOUT_SECONDS. JOB_STALE_SECONDS, when set, overrides both.
JOB_STALE_SECONDS_LOCAL = env_int("JOB_STALE_SECONDS_LOCAL", 30)
JOB_STALE_SECONDS_REMOTE = env_int("JOB_STALE_SECONDS_REMOTE", max(30, 2 * PROVIDER_TIMEOUT_SECONDS))
if env_str("JOB_STALE_SECONDS"):
    JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", JOB_STALE_SECONDS_REMOTE)
# The sweeper (reviewapp.core.job_sweep.jobs_sweep, under celery beat): every JOB_SWEEP_SECONDS it requeues the
# running jobs whose heartbeat is stale, so a job whose worker died resumes within its stale timeout + this interval
# with no operator. A job whose worker died in JOB_SWEEP_MAX_EXECUTIONS executions is failed instead (a job that
# kills its worker would loop); 0 = no limit.
JOB_SWEEP_SECONDS = env_int("JOB_SWEEP_SECONDS", 30)
JOB_SWEEP_MAX_EXECUTIONS = env_int("JOB_SWEEP_MAX_EXECUTIONS", 5)
# A running job whose Celery node answers `celery inspect` without it (a killed pool child, an execution that a
# database or broker outage stopped) is taken over at the next sweep once silent this long (not at its start).
JOB_GONE_GRACE_SECONDS = env_int("JOB_GONE_GRACE_SECONDS", 5)
# Sent or swept: a queued job whose message never reached the broker (it was down) is sent by the sweeper after
# JOB_RESEND_SECONDS; one sent but still queued after JOB_RESEND_SENT_SECONDS is sent again (a broker that
# restarted without its data). A second delivery is harmless: the claim admits one execution.
JOB_RESEND_SECONDS = env_int("JOB_RESEND_SECONDS", 30)
JOB_RESEND_SENT_SECONDS = env_int("JOB_RESEND_SENT_SECONDS", 600)
# Worker pools per job kind (reviewapp.core.jobs.job_queue): jobs on the local model to one queue (a solo worker),
# jobs that wait on a provider (and the sweeper) to another (a concurrent pool). Unset: the default queue.
# The Celery app of the workers (the project package wires it); core loads it by this name before sending a task.
JOB_CELERY_APP = "reviewapp.celery.app"
JOB_QUEUE_LOCAL = env_str("CELERY_QUEUE_LOCAL")
JOB_QUEUE_REMOTE = env_str("CELERY_QUEUE_REMOTE")
# Email notices (reviewapp.notifications): sent by celery beat every NOTIFY_SECONDS; a reminder after items wait
# REVIEW_REMINDER_DAYS days (0: never). Mail by Django's backends: the console in the demo, SMTP by settings
# (EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD or EMAIL_HOST_PASSWORD_FILE, EMAIL_USE_TLS).
NOTIFY_SECONDS = env_int("NOTIFY_SECONDS", 300)
REVIEW_REMINDER_DAYS = env_int("REVIEW_REMINDER_DAYS", 3)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "legal-eval@localhost")
# The address links in emails start with (e.g. https://eval.example-firm.com); empty: links are paths only.
SITE_URL = env_str("SITE_URL")
CELERY_BEAT_SCHEDULE = {
    "notifications-send": {
        "task": "reviewapp.notifications_send",
        "schedule": float(NOTIFY_SECONDS),
        "options": {"queue": JOB_QUEUE_REMOTE or CELERY_TASK_DEFAULT_QUEUE, "expires": float(NOTIFY_SECONDS)},
    },
    "jobs-sweep": {
        "task": "reviewapp.jobs_sweep",
        "schedule": float(JOB_SWEEP_SECONDS),
        # A sweep that waited longer than one interval is superseded by the next one.
        "options": {"queue": JOB_QUEUE_REMOTE or CELERY_TASK_DEFAULT_QUEUE, "expires": float(JOB_SWEEP_SECONDS)},
    },
}
# Beat keeps its schedule in memory: every entry is an interval, so nothing is lost by a restart, and a var/ that
# the embedding cache filled (or a read-only one) cannot stop beat, and with it the sweeper.
CELERY_BEAT_SCHEDULER = env_str("CELERY_BEAT_SCHEDULER", "celery.beat:Scheduler")
# Vectors of the local model shared by every worker process on this machine (one file per text, keyed by
# model and sha256); empty = each process keeps its own.
EMBEDDING_CACHE_DIR = env_str("EMBEDDING_CACHE_DIR", str(VAR_DIR / "embeddings"))
# How long a takeover waits for `celery inspect active` replies.
JOB_INSPECT_TIMEOUT_SECONDS = env_int("JOB_INSPECT_TIMEOUT_MS", 1000) / 1000
if REDIS_URL:
    # Redis hands an unacknowledged message to another worker after this long. Matched to the longest stale
    # timeout: a killed worker's job is then stale when its message comes back, and the new delivery takes it
    # over; a live job's copy finds it beating and does nothing. (Redis' default, an hour, kept a killed
    # worker's messages unacknowledged that long.)
    # The sweeper recovers claimed jobs sooner; this is for a message whose job was never claimed.
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = env_int("CELERY_VISIBILITY_TIMEOUT", max(
        JOB_STALE_SECONDS_LOCAL, JOB_STALE_SECONDS_REMOTE, int(env_str("JOB_STALE_SECONDS") or 0)) + 5)

LOG_LEVEL = env_str("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {"expected_refusal": {"()": "reviewapp.core.http.log_filters.ExpectedRefusalOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # httpx logs every request line at INFO; the receipt ledger already records each request.
        "httpx": {"level": env_str("HTTPX_LOG_LEVEL", "WARNING")},
        # An expected 403/404 is one line (method, path, status), without the exception's traceback.
        "django.request": {"filters": ["expected_refusal"]},
    },
}
