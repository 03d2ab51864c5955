"""Demo data of the review core: one small generic pool, assigned to the demo reviewers. Idempotent.

The review core knows nothing of statutes or CUAD, so this pool is built from
a few hand-written items. The statute benchmark's demo declares its own pool
from a real run by calling ``reviewapp.services.pool_create`` (and
``pool_assign``); nothing here imports a job.
"""

from __future__ import annotations

import pathlib

from django.contrib.auth import get_user_model
from django.db import transaction

from reviewapp.models import ReviewPool
from reviewapp.services import pool_assign, pool_create

DEMO_POOL_NAME = "Demo pool (generic items, review core)"
DEMO_REVIEWERS = ("reviewer", "reviewer2")

_SECURITY_DEPOSIT = (
    "1. A landlord may demand or receive a security deposit not exceeding three months' periodic rent.\n"
    "2. Upon termination of the tenancy, the landlord shall return the deposit within 30 days, less any "
    "amount withheld for unpaid rent or for damage beyond ordinary wear and tear, together with an "
    "itemized written statement of the amounts withheld.\n"
    "3. A landlord who fails to return the deposit as required is liable to the tenant for the amount "
    "wrongfully withheld and a penalty of up to twice the deposit."
)
_NOTICE = (
    "1. A periodic tenancy from month to month may be terminated by either party by written notice given "
    "at least 30 days before the end of the rental period.\n"
    "2. Notice shall be served personally or by certified mail to the address of the other party."
)
_DEFINITIONS = (
    "As used in this chapter, unless the context otherwise requires:\n"
    "1. \"Security\" means any payment, deposit or fee, other than rent, intended primarily to secure "
    "the performance of a rental agreement.\n"
    "2. \"Ordinary wear and tear\" means deterioration from the intended use of the premises."
)

DEMO_ITEMS = [
    {
        "query_id": "demo-q1",
        "doc_id": "demo-sec-100",
        "query_text": "How long does a landlord have to return a tenant's security deposit?",
        "source_heading": "Sec. 100  Security deposits: limit; return; statement",
        "source_text": _SECURITY_DEPOSIT,
        "passage_caption": "Sec. 100  Security deposits: limit; return; statement",
        "passage_text": _SECURITY_DEPOSIT.split("\n")[1],
    },
    {
        "query_id": "demo-q1",
        "doc_id": "demo-sec-090",
        "query_text": "How long does a landlord have to return a tenant's security deposit?",
        "source_heading": "Sec. 90  Definitions",
        "source_text": _DEFINITIONS,
        "passage_caption": "Sec. 90  Definitions",
        "passage_text": _DEFINITIONS.split("\n")[1],
    },
    {
        "query_id": "demo-q1",
        "doc_id": "demo-sec-110",
        "query_text": "How long does a landlord have to return a tenant's security deposit?",
        "source_heading": "Sec. 110  Termination of periodic tenancy; notice",
        "source_text": _NOTICE,
        "passage_caption": "Sec. 110  Termination of periodic tenancy; notice",
        "passage_text": _NOTICE.split("\n")[0],
    },
    {
        "query_id": "demo-q2",
        "doc_id": "demo-sec-110",
        "query_text": "How much notice must a month-to-month tenant give before moving out?",
        "source_heading": "Sec. 110  Termination of periodic tenancy; notice",
        "source_text": _NOTICE,
        "passage_caption": "Sec. 110  Termination of periodic tenancy; notice",
        "passage_text": _NOTICE.split("\n")[0],
    },
    {
        "query_id": "demo-q2",
        "doc_id": "demo-sec-100",
        "query_text": "How much notice must a month-to-month tenant give before moving out?",
        "source_heading": "Sec. 100  Security deposits: limit; return; statement",
        "source_text": _SECURITY_DEPOSIT,
        "passage_caption": "Sec. 100  Security deposits: limit; return; statement",
        "passage_text": _SECURITY_DEPOSIT.split("\n")[0],
    },
]


def load_demo(*, data_dir: pathlib.Path, stdout) -> None:
    """Create the generic demo pool once and assign it to the demo reviewers that exist."""
    User = get_user_model()
    with transaction.atomic():
        pool = ReviewPool.objects.filter(name=DEMO_POOL_NAME).first()
        if pool is None:
            pool = pool_create(
                name=DEMO_POOL_NAME,
                kind="passage",
                items=DEMO_ITEMS,
                declared_rule="explicit list: five hand-written demo items over two queries",
                declared_params={"source": "reviewapp.demo"},
                reviewers_per_item=2,
                reviewer_title="Demo set",
                instructions="A short demo set. Grade the complete section and the passage separately.",
            )
            stdout.write(f"  review: declared {DEMO_POOL_NAME!r} with {len(DEMO_ITEMS)} items")
        reviewers = list(User.objects.filter(username__in=DEMO_REVIEWERS))
        reviewers = [user for user in reviewers if user.has_perm("reviewapp.grade_passages")]
        if len(reviewers) >= pool.reviewers_per_item:
            added = pool_assign(pool=pool, reviewers=reviewers)
            if added:
                stdout.write(f"  review: {added} assignments to {', '.join(u.username for u in reviewers)}")
        else:
            stdout.write("  review: demo reviewers missing; pool left unassigned")
