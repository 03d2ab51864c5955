FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY pyproject.toml ./
COPY reviewapp reviewapp
COPY benchmarks benchmarks
COPY grading grading
COPY scoring scoring
RUN pip install --no-cache-dir .
COPY . .
# PYTHONDONTWRITEBYTECODE is set above: without this, every process would compile each module it imports.
RUN python -m compileall -q /app/reviewapp /app/benchmarks /app/grading /app/scoring /app/manage.py
RUN PRODUCTION=1 SECRET_KEY=build-only-not-secret-build-only-not-secret-0123456789 python manage.py collectstatic --noinput
USER nobody
EXPOSE 8000
CMD ["gunicorn", "reviewapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--preload"]
