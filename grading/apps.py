from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "CUAD clause-extraction grader"
    product_data = True

    def ready(self) -> None:
        from grading.audits.kinds import CLAUSE_KIND
        from reviewapp.review.kinds import kind_register

        kind_register(CLAUSE_KIND)

    def demo_load(self, *, data_dir, stdout) -> None:
        from grading.demo import load_demo

        load_demo(data_dir=data_dir, stdout=stdout)
