"""Corpora and their provisions under corpus/: importing a corpus file, a corpus's chapters, one provision.

"import" and "provisions" are therefore not corpus codes (``corpus_file.RESERVED_CODES``). The paths these pages
had before they moved under corpus/ answer with a permanent redirect.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("benchmarks.corpus.views")

urlpatterns = [
    path("corpus/import/", views.corpus_import, name="corpus-import"),
    path("corpus/provisions/<int:pk>/", views.provision_detail, name="provision"),
    path("corpus/<str:corpus>/", views.corpus_detail, name="corpus"),
    # path: US Code chapter ids contain "/" (title 1, chapter 1 is "1/1").
    path("corpus/<str:corpus>/chapter/<path:chapter>/", views.chapter_detail, name="chapter"),
    moved("corpora/import/", "benchmarks:corpus-import"),
    moved("provisions/<int:pk>/", "benchmarks:provision"),
]
