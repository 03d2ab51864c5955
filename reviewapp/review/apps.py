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
        from reviewapp.review.agreement import panels as agreement_panels
        from reviewapp.review.assignment import panels as assignment_panels
        from reviewapp.review.assignment.selectors import assignments_held
        from reviewapp.review.exchange import panels as exchange_panels
        from reviewapp.review.pools.panels import (
            item_rulings_set,
            known_answer_panel_add,
            pool_list_panel_add,
            pool_page_panel_add,
        )

        register_assignment_counter(assignments_held)
        # The pool pages show what the nouns above pools read; pools cannot import them (they import pools).
        pool_list_panel_add(exchange_panels.pool_list_panel)
        for panel in (agreement_panels.pool_page_panel, assignment_panels.pool_page_panel,
                      exchange_panels.pool_page_panel):
            pool_page_panel_add(panel)
        known_answer_panel_add(agreement_panels.known_answer_panel)
        known_answer_panel_add(assignment_panels.known_answer_panel)
        item_rulings_set(agreement_panels.item_rulings)
