"""The CUAD job page: parameters as a definition list, and no polling once the job is finished."""

from __future__ import annotations

from grading.runs.models import ConsoleJob


def test_a_finished_job_shows_readable_parameters_and_stops_polling(loaded, stakeholder_client):
    job = ConsoleJob.objects.create(kind="grade", dataset=loaded.dataset, total=1, status="done",
                                    params={"categories": ["Governing Law", "Parties"], "threshold": 0.5,
                                            "use_cache": True})
    html = stakeholder_client.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()
    assert 'data-testid="job-params"' in html and "{&#x27;" not in html and "{'" not in html
    assert "<dt>categories</dt><dd>Governing Law, Parties</dd>" in html and "<dt>use cache</dt><dd>yes</dd>" in html
    assert "hx-trigger" not in html
