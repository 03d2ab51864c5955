from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    """Roles and access, hashing, exports, tracked jobs, health, backup: used by everyone, knows no job."""

    name = "reviewapp.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from reviewapp.core.roles import grant_admin_model_permissions

        post_migrate.connect(grant_admin_model_permissions, dispatch_uid="reviewapp-admin-perms")
