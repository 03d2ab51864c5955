"""Pages of the blinded review, under /review/: each noun's pages live in its own folder's urls.py, one namespace.

Each noun's paths begin with its folder's name: workspace/ (the reviewer's queue and items), pools/, assignment/,
agreement/, exchange/, people/. A page that lived elsewhere before keeps its old path as a permanent redirect
(core/http/moved.py), in the urls.py of the folder it moved to. Reviewer URLs carry only opaque random ids.
"""

from reviewapp.review.agreement.urls import urlpatterns as _agreement
from reviewapp.review.assignment.urls import urlpatterns as _assignment
from reviewapp.review.exchange.urls import urlpatterns as _exchange
from reviewapp.review.people.urls import urlpatterns as _people
from reviewapp.review.pools.urls import urlpatterns as _pools
from reviewapp.review.workspace.urls import urlpatterns as _workspace

app_name = "review"
urlpatterns = [
    *_workspace,
    *_pools,
    *_assignment,
    *_agreement,
    *_exchange,
    *_people,
]
