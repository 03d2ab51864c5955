"""The admin role administers every app that declares product data, found through the app registry."""

from django.contrib.auth.models import Group

from reviewapp.core.apps import product_data_apps
from reviewapp.core.auth.roles import ACCOUNT_APP_LABELS, ensure_role_groups


def test_the_admin_group_holds_the_permissions_of_every_product_data_app(admin_user_):
    Group.objects.get(name="admin").permissions.clear()
    ensure_role_groups()
    labels = set(Group.objects.get(name="admin").permissions.values_list("content_type__app_label", flat=True))
    assert {"benchmarks", "grading", "providers", "reviewapp"} <= {config.label for config in product_data_apps()}
    # Account apps (identity links, sessions) are backed up with the product's data, but only a superuser touches
    # them.
    assert {config.label for config in product_data_apps()} - set(ACCOUNT_APP_LABELS) <= labels
    assert not labels & set(ACCOUNT_APP_LABELS)
    assert admin_user_.has_perm("grading.change_cuaddataset")
