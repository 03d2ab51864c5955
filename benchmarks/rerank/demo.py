"""The demo's real generative model on the statute leaderboard: SmolLM2-135M-Instruct on llama.cpp, reranking.

``make demo`` starts the bundled model server (``manage.py model_server``) beside the worker and passes its base URL
in ``DEMO_MODEL_SERVER_URL``; ``demo_setup`` then reranks the demo retrieval run's candidates through the ordinary
``openai_compatible`` provider (logprobs over the grade tokens), synchronously, one request at a time (the server
computes one at a time on the machine's cores), within a small budget (``MAX_REQUESTS``). The run pins the served
model id, which names the model, its quantisation, the server and its context window, so every page and export says
what it is. Its figures are shown whatever they are; a 135M model is expected to lose to keyword order. Without the
variable nothing is run.
"""

from __future__ import annotations

import time

from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.rerank.services import RerankError, rerank_run_create, rerank_run_execute
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.providers.model_server import served_model_id
from reviewapp.providers.model_server.process import demo_server

# One candidate per request: asked for several grades at once, the 135M model answers "1. NRS ..." (a list, not the
# grades), which no reading can align to the candidates; asked for one, its first token is a grade.
CANDIDATES_PER_REQUEST = 1
# A small scope, said on every page as "incomplete: n of N queries reranked": the model reads ~30 prompt tokens/s on a
# busy 2-core machine (about 10 s per candidate), so the demo's 1,020 candidates would take about 3 hours. The budget
# stops the run after the first query's 30 candidates; resume it with a raised budget for more.
MAX_REQUESTS = 30


def load_model_rerank_demo(*, retrieval_run: RetrievalRun, stdout) -> RerankRun | None:
    """The real model's rerank run of ``retrieval_run`` (present, or run now). Idempotent."""
    model_id = served_model_id()
    present = (RerankRun.objects.filter(retrieval_run=retrieval_run, provider="openai_compatible", model_id=model_id)
               .exclude(status=RerankStatus.FAILED).order_by("id").first())
    if present is not None:
        stdout.write(f"benchmarks: rerank run #{present.pk} ({model_id}) {present.status}\n")
        return present
    base_url = demo_server(stdout=stdout, what="benchmarks: real-model rerank")
    if not base_url:
        return None
    started = time.perf_counter()
    try:
        run = rerank_run_create(retrieval_run=retrieval_run, provider="openai_compatible", model_id=model_id,
                                method="logprobs", base_url=base_url, candidates_per_request=CANDIDATES_PER_REQUEST,
                                max_requests=MAX_REQUESTS, concurrency=1, enqueue=False)
    except RerankError as error:
        stdout.write(f"benchmarks: real-model rerank not created ({error})\n")
        return None
    status = rerank_run_execute(run_id=run.pk)
    run.refresh_from_db()
    stdout.write(f"benchmarks: rerank run #{run.pk} ({model_id}) {status or run.status} in "
                 f"{time.perf_counter() - started:.0f} s, {run.candidates_planned} candidates"
                 + (f"; {run.error}" if run.error else "") + "\n")
    return run
