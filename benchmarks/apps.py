from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    verbose_name = "Statute relevance benchmark"
    product_data = True

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.labels.kinds import PASSAGE_KIND, TARGET_KIND
        from benchmarks.rerank.models import RerankRun
        from reviewapp.core.jobs import job_kind_register
        from reviewapp.review.kinds import kind_register

        kind_register(PASSAGE_KIND)
        kind_register(TARGET_KIND)
        job_kind_register(model=RerankRun, resume=_rerank_resume_stale,
                          task="benchmarks.rerank.tasks.rerank_run_execute")

    def demo_load(self, *, data_dir, stdout) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.demo import load_demo

        load_demo(data_dir=data_dir, stdout=stdout)

    def after_restore(self) -> None:
        # The interactive keyword index is derived from provisions, so a backup does not hold it.
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from benchmarks.corpus.services import search_index_rebuild

        search_index_rebuild()


def _rerank_resume_stale(run) -> None:
    """The sweeper's takeover of a run whose execution is gone (never a re-attempt of paid requests)."""
    # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
    from benchmarks.rerank.services import rerank_run_resume

    rerank_run_resume(run=run)
