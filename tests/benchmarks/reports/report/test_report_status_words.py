"""The report's per-query status cell reads as words, not as the raw status codes of the JSON."""

from __future__ import annotations

import re

from benchmarks.retrieval.models import RetrievalResult
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run


def test_per_query_status_cells_say_which_search_filled_the_pool(db, stakeholder_client):
    run = synthetic_retrieval_run(seed=21)
    statuses = dict(RetrievalResult.objects.filter(run=run).values_list("query__qid", "status"))
    page = stakeholder_client.get(f"/benchmarks/reports/retrieval/{run.pk}/?replicates=1000").content.decode()
    table = page.split('id="queries-title"', 1)[1].split("</table>", 1)[0]
    cells = dict(re.findall(r'<a href="#q-([^"]+)">[^<]+</a></td><td>[^<]*</td><td>[^<]*</td>\s*<td>([^<]*)</td>',
                            table))
    assert cells and set(cells) <= set(statuses)
    words = {"ok": "keyword search", "fallback": "fallback search", "short": "short: fewer than k candidates"}
    for qid, cell in cells.items():
        assert "(fallback)" not in cell and cell != statuses[qid], (qid, cell)
        if statuses[qid] in words:
            assert cell.startswith(words[statuses[qid]]), (qid, cell)
