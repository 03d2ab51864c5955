"""The review engine's tables, defined by noun in each folder's models.py.

Django registers an app's models when it imports this module, so it imports each of them here (as modules: callers
import a model from its own folder).
"""

from reviewapp.review.agreement import models as agreement_models  # noqa: F401
from reviewapp.review.assignment import models as assignment_models  # noqa: F401
from reviewapp.review.day import models as day_models  # noqa: F401
from reviewapp.review.exchange import models as exchange_models  # noqa: F401
from reviewapp.review.judgments import models as judgments_models  # noqa: F401
from reviewapp.review.pools import models as pools_models  # noqa: F401
