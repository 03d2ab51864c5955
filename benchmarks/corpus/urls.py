"""Corpora and their provisions: importing a corpus file, a corpus's chapters, one provision.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.corpus.views")

urlpatterns = [
    path("corpora/import/", views.corpus_import, name="corpus-import"),
    path("corpus/<str:corpus>/", views.corpus_detail, name="corpus"),
    # path: US Code chapter ids contain "/" (title 1, chapter 1 is "1/1").
    path("corpus/<str:corpus>/chapter/<path:chapter>/", views.chapter_detail, name="chapter"),
    path("provisions/<int:pk>/", views.provision_detail, name="provision"),
]
