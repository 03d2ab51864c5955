"""Demo accounts and demo data, idempotently.

Passwords are random and printed once, when an account is first created; a
second run leaves accounts alone (``--reset-passwords`` prints new ones).
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from reviewapp.core.apps import demo_loaders
from reviewapp.core.auth.roles import ensure_role_groups

DEMO_ACCOUNTS = [
    ("admin", "admin", True),
    ("reviewer", "reviewer", False),
    ("reviewer2", "reviewer", False),
    ("stakeholder", "stakeholder", False),
]


class Command(BaseCommand):
    help = "Create the demo accounts and load the demo data from DATA_DIR (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--reset-passwords", action="store_true")
        parser.add_argument("--accounts-only", action="store_true")

    def handle(self, *args, **options):
        self._accounts(reset=options["reset_passwords"])
        if options["accounts_only"]:
            return
        data_dir = Path(settings.DATA_DIR)
        if not data_dir.is_dir():
            raise CommandError(
                f"DATA_DIR {data_dir} does not exist. Set DATA_DIR to the folder holding cuad/ and "
                "statutes/ (README, 'Data' says where to download CUAD and the statute pages)."
            )
        for config in demo_loaders():
            self.stdout.write(f"Loading demo data: {config.label}")
            config.demo_load(data_dir=data_dir, stdout=self.stdout)

    def _accounts(self, *, reset: bool) -> None:
        User = get_user_model()
        created_lines = []
        with transaction.atomic():
            ensure_role_groups()
            for username, role, staff in DEMO_ACCOUNTS:
                user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff})
                user.groups.add(Group.objects.get(name=role))
                if created or reset:
                    password = secrets.token_urlsafe(12)
                    user.set_password(password)
                    user.save()
                    created_lines.append(f"  {username:<12} {role:<12} password: {password}")
        if created_lines:
            self.stdout.write("Demo accounts (passwords are shown only this once):")
            for line in created_lines:
                self.stdout.write(line)
        else:
            self.stdout.write(
                "Demo accounts already exist; their passwords were printed when they were created "
                "(run `manage.py demo_setup --accounts-only --reset-passwords` for new ones)."
            )
