#!/usr/bin/env python
"""Django's command-line utility, with configuration errors reported in one line."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    from reviewapp.config import ConfigError

    try:
        from django.core.management import execute_from_command_line
        from django.db.utils import OperationalError

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
