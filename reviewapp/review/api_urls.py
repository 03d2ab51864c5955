"""API of the blinded review, under /api/v1/review/: each noun's endpoints live in its own folder's api_urls.py.

Reviewer (workspace/): queue/, items/<id>/, items/<id>/judgment/ (+ reopen/), items/<id>/history/ (own only).
Admin: pools/ (pools/), pools/<id>/assign/ (assignment/), pools/<id>/progress|agreement|qrels|judgments/
(agreement/), and the label exchange, not blind (exchange/): pools/<id>/label-studio/, argilla/, label-imports/,
imported-labels/, and label-sources/.
"""

from reviewapp.review.agreement.api_urls import urlpatterns as _agreement
from reviewapp.review.assignment.api_urls import urlpatterns as _assignment
from reviewapp.review.exchange.api_urls import urlpatterns as _exchange
from reviewapp.review.pools.api_urls import urlpatterns as _pools
from reviewapp.review.workspace.api_urls import urlpatterns as _workspace

app_name = "review-api"
urlpatterns = [
    *_workspace,
    *_pools,
    *_assignment,
    *_agreement,
    *_exchange,
]
