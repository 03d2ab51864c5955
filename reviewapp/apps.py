from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReviewAppConfig(AppConfig):
    name = "reviewapp"
    verbose_name = "Blinded review"

    def ready(self) -> None:
        from reviewapp.roles import grant_admin_model_permissions

        post_migrate.connect(grant_admin_model_permissions, dispatch_uid="reviewapp-admin-perms")
