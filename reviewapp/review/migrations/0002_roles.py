"""Creates the three role groups with their permissions (idempotent)."""

from django.db import migrations

ROLE_PERMISSIONS = {
    "reviewer": ["grade_passages"],
    "stakeholder": ["view_reports"],
    "admin": ["view_reports", "launch_runs", "manage_reviews"],
}


def create_roles(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after migrate; make them exist now.
    app_config = apps.get_app_config("reviewapp")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        perms = Permission.objects.filter(content_type__app_label="reviewapp", codename__in=codenames)
        group.permissions.add(*perms)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
