from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The generic blinded-review engine. Its label stays ``reviewapp`` so tables and migrations keep their names."""

    name = "reviewapp.review"
    label = "reviewapp"
    product_data = True
    verbose_name = "Blinded review"

    def ready(self) -> None:
        # Imported here, not at the top: this module is loaded before the app registry, which models need.
        from reviewapp.core.auth.roles import register_assignment_counter
        from reviewapp.review.assignment.selectors import assignments_held

        register_assignment_counter(assignments_held)
