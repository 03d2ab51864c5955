from django.apps import AppConfig, apps
from django.contrib.auth.signals import user_logged_in
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    """Roles and access, hashing, exports, tracked jobs, health, backup: used by everyone, knows no job."""

    name = "reviewapp.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from reviewapp.core.auth.audit import connect_audit_signals
        from reviewapp.core.auth.signin import record_signin
        from reviewapp.core.records.append_only import register_sqlite_bypass

        connection_created.connect(register_sqlite_bypass, dispatch_uid="append-only-sqlite-bypass")
        user_logged_in.connect(record_signin, dispatch_uid="signin-method")
        post_migrate.connect(_role_permissions_after_migrate, dispatch_uid="reviewapp-admin-perms")
        connect_audit_signals()


def _role_permissions_after_migrate(sender: AppConfig | None = None, **kwargs: object) -> None:
    # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
    from reviewapp.core.auth.audit import audit_suspended
    from reviewapp.core.auth.roles import grant_admin_model_permissions

    with audit_suspended():
        grant_admin_model_permissions(sender, **kwargs)


# What each app offers the product as a whole, found through its AppConfig, so that core names no job.
# An app config may declare ``product_data = True`` (its tables hold what people made: backed up, administered
# by the admin role), ``demo_load(*, data_dir, stdout)`` (its demo data, in INSTALLED_APPS order) and
# ``after_restore()`` (rebuild state derived from its tables after ``import_all``).


def product_data_apps() -> list[AppConfig]:
    return [config for config in apps.get_app_configs() if getattr(config, "product_data", False)]


def demo_loaders() -> list[AppConfig]:
    return [config for config in apps.get_app_configs() if callable(getattr(config, "demo_load", None))]


def after_restore_all() -> None:
    for config in apps.get_app_configs():
        hook = getattr(config, "after_restore", None)
        if callable(hook):
            hook()
