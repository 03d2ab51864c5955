"""What each app offers the product as a whole, found through its ``AppConfig``, so that core names no job.

An app config may declare:
- ``product_data = True``: its tables hold what people made (backed up, administered by the admin role);
- ``demo_load(*, data_dir, stdout)``: load its demo data (``manage.py demo_setup``), in INSTALLED_APPS order;
- ``after_restore()``: rebuild state derived from its tables after ``import_all``.
"""

from __future__ import annotations

from django.apps import AppConfig, apps


def product_data_apps() -> list[AppConfig]:
    return [config for config in apps.get_app_configs() if getattr(config, "product_data", False)]


def demo_loaders() -> list[AppConfig]:
    return [config for config in apps.get_app_configs() if callable(getattr(config, "demo_load", None))]


def after_restore_all() -> None:
    for config in apps.get_app_configs():
        hook = getattr(config, "after_restore", None)
        if callable(hook):
            hook()
