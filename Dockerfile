FROM python:3.11-slim
# STATIC_ROOT sits outside var/: var/ is a volume that outlives the image, so files collected into it would stay
# those of the first image.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 VAR_DIR=/app/var STATIC_ROOT=/app/static
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm \
    libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
# A user of its own with a fixed id (not nobody, whose files anyone running as nobody could write): secrets and
# volumes can be given to uid 10001 on the host.
RUN groupadd --system --gid 10001 app && useradd --system --uid 10001 --gid app --home-dir /app --no-create-home app
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY pyproject.toml ./
COPY reviewapp reviewapp
COPY benchmarks benchmarks
COPY grading grading
COPY scoring scoring
RUN pip install --no-cache-dir .
# .dockerignore keeps .git, .venv, node_modules, var/, local databases, secrets and tests out of the image.
COPY . .
# PYTHONDONTWRITEBYTECODE is set above: without this, every process would compile each module it imports.
RUN python -m compileall -q /app/reviewapp /app/benchmarks /app/grading /app/scoring /app/manage.py
RUN PRODUCTION=1 SECRET_KEY=build-only-not-secret-build-only-not-secret-0123456789 python manage.py collectstatic --noinput
# var/ holds the shared vector store (every worker reads the vectors another one computed) and beat's schedule.
# It belongs to the image's user, so a named volume mounted on it starts writable by that user.
RUN rm -rf /app/var && mkdir -p /app/var/embeddings && chown -R app:app /app/var
USER app
EXPOSE 8000
CMD ["gunicorn", "reviewapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--threads", "4", "--preload"]
