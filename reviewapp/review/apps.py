from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The generic blinded-review engine. Its label stays ``reviewapp`` so tables and migrations keep their names."""

    name = "reviewapp.review"
    label = "reviewapp"
    product_data = True
    verbose_name = "Blinded review"

    def ready(self) -> None:
        from reviewapp.core.auth.roles import register_assignment_counter

        def assignments_held(user) -> int:
            """Assignments not yet completed: a finished reviewer may take another role, an active one may not."""
            from reviewapp.review.assignment.models import Assignment
            from reviewapp.review.judgments.models import Judgment

            done = Judgment.objects.filter(reviewer=user, current__status="complete").values("item_id")
            return Assignment.objects.filter(reviewer=user).exclude(item_id__in=done).count()

        register_assignment_counter(assignments_held)
