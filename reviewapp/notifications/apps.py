from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "reviewapp.notifications"
    label = "notifications"
    verbose_name = "Email notifications"
    default_auto_field = "django.db.models.BigAutoField"
