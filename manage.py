#!/usr/bin/env python
"""Django's command-line utility, with configuration errors reported in one line."""

import os
import sys


def _relevance_metrics_without_django() -> None:
    """``relevance_metrics`` over files alone is arithmetic: run it before Django and Celery load (they were
    most of the process beside ir_measures). Returns when the options need Django (see scoring.ir.trec_cli)."""
    # One BLAS thread, as reviewapp/__init__.py sets for every process of the project, before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from scoring.ir import trec_cli

    options = trec_cli.parse_without_django(sys.argv[2:])
    if options is not None:
        sys.exit(trec_cli.run(options))


def main() -> None:
    if sys.argv[1:2] == ["relevance_metrics"]:
        _relevance_metrics_without_django()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    from reviewapp.config import ConfigError
    from reviewapp.startup import starting

    try:
        import django
        from django.core.management import execute_from_command_line
        from django.db.utils import OperationalError

        with starting():
            django.setup()  # execute_from_command_line's own call then finds the apps ready
        execute_from_command_line(sys.argv)
    except ConfigError as error:
        # A misconfigured environment deserves one readable line, not a traceback.
        print(f"configuration error: {error}", file=sys.stderr)
        sys.exit(2)
    except OperationalError as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        print(
            f"database error: {first_line}. Check DATABASE_URL (unset it for the embedded SQLite "
            "default) and that the database server is running.",
            file=sys.stderr,
        )
        sys.exit(2)


if __name__ == "__main__":
    main()
