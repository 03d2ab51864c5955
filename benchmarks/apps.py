from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    verbose_name = "Statute relevance benchmark"
    product_data = True

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.job_kinds import RERANK_JOB
        from benchmarks.labels.kinds import PASSAGE_KIND, TARGET_KIND
        from reviewapp.core.jobs import job_kind_register
        from reviewapp.review.kinds import kind_register

        kind_register(PASSAGE_KIND)
        kind_register(TARGET_KIND)

        job_kind_register(RERANK_JOB)

    def demo_load(self, *, data_dir, stdout) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.demo import load_demo

        load_demo(data_dir=data_dir, stdout=stdout)

    def after_restore(self) -> None:
        # The interactive keyword index is derived from provisions, so a backup does not hold it.
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.corpus.services import search_index_rebuild

        search_index_rebuild()

