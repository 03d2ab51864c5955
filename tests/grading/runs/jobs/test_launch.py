"""Launching an extraction job from the Runs page and the API."""

from __future__ import annotations

from grading.runs.models import ConsoleJob


def test_an_admin_launches_the_local_extractor_from_the_runs_page(loaded, admin_client_, celery_worker, low_threshold):
    from tests.helpers import wait_until

    response = admin_client_.post("/cuad/runs/launch/", {"provider": "local", "limit": "2"})
    assert response.status_code == 302 and response["Location"].startswith("/cuad/runs/jobs/")
    job = ConsoleJob.objects.get()
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).is_finished, timeout=120)
    page = admin_client_.get(response["Location"]).content.decode()
    assert "heuristic baseline" in page and "done" in page


def test_the_launch_form_refuses_bad_input_with_a_message(loaded, admin_client_):
    response = admin_client_.post("/cuad/runs/launch/", {"provider": "local", "limit": "many"})
    assert response.status_code == 400 and "limit: &#x27;many&#x27; is not a whole number" in response.content.decode()
    response = admin_client_.post("/cuad/runs/launch/", {"provider": "anthropic", "model_id": ""})
    assert response.status_code == 400 and "needs a model id" in response.content.decode()
    assert not ConsoleJob.objects.exists()


def test_the_api_launches_a_job_for_admins_only(loaded, admin_client_, stakeholder_client, low_threshold):
    assert stakeholder_client.post("/api/v1/cuad/jobs/", {"provider": "local"}).status_code == 403
    response = admin_client_.post("/api/v1/cuad/jobs/", {"provider": "local", "limit": 1},
                                  content_type="application/json")
    assert response.status_code == 202
    job = admin_client_.get(f"/api/v1/cuad/jobs/{response.json()['id']}/").json()
    assert job["provider"] == "local" and job["total"] == 1
