from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The generic blinded-review engine. Its label stays ``reviewapp`` so tables and migrations keep their names."""

    name = "reviewapp.review"
    label = "reviewapp"
    product_data = True
    verbose_name = "Blinded review"
