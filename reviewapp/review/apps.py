from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The generic blinded-review engine. Its label stays ``reviewapp`` so tables and migrations keep their names."""

    name = "reviewapp.review"
    label = "reviewapp"
    product_data = True
    verbose_name = "Blinded review"

    def ready(self) -> None:
        # local import: this module is loaded before the app registry, which models (and the panels) need
        from reviewapp.core.auth.roles import register_assignment_counter
        from reviewapp.review.assignment.selectors import assignments_held
        from reviewapp.review.pools.panels import (
            item_rulings_set,
            known_answer_panel_add,
            pool_list_panel_add,
            pool_page_panel_add,
        )

        register_assignment_counter(assignments_held)
        # The pool pages show what the nouns above pools read; pools cannot import them (they import pools). By
        # dotted path: imported on a pool page's first request, not by every process (agreement's load numpy).
        pool_list_panel_add("reviewapp.review.exchange.panels.pool_list_panel")
        for noun in ("agreement", "assignment", "exchange"):
            pool_page_panel_add(f"reviewapp.review.{noun}.panels.pool_page_panel")
        for noun in ("agreement", "assignment"):
            known_answer_panel_add(f"reviewapp.review.{noun}.panels.known_answer_panel")
        item_rulings_set("reviewapp.review.agreement.panels.item_rulings")
