"""The CUAD console under /cuad/ (login required; reviewers get 403); a page's exports are files below it.

Each feature's URLs live in its own folder's urls.py, one namespace, and begin with its folder's name (dataset/,
runs/, scorecard/, audits/, contracts/, comparisons/); the order below is the order Django tries them in, and no
two features' patterns match the same path. Pages that lived elsewhere before keep their old paths as permanent
redirects.
"""

from grading.audits.urls import urlpatterns as _audits
from grading.comparisons.urls import urlpatterns as _comparisons
from grading.contracts.urls import urlpatterns as _contracts
from grading.dataset.urls import urlpatterns as _dataset
from grading.export_urls import page_with_exports
from grading.runs.urls import urlpatterns as _runs
from grading.scorecard.urls import urlpatterns as _scorecard
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.views")

app_name = "cuad"
urlpatterns = [
    *page_with_exports("", views.home, name="home", stem="overview"),
    *_dataset,
    *_runs,
    *_scorecard,
    *_audits,
    *_contracts,
    *_comparisons,
]
