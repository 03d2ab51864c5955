"""/healthz tells anonymous callers and non-staff only up or down; which dependency failed, and the driver's
words (host, port), only staff."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

DOWN_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1: a real connection refusal


@pytest.mark.django_db
def test_anonymous_callers_learn_only_that_the_service_is_down():
    with override_settings(REDIS_URL=DOWN_REDIS):
        response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "down"}
    text = response.content.decode()
    for leak in ("127.0.0.1", ":1", "redis", "Error", "refused", "sqlite", "postgres"):
        assert leak not in text, leak


def test_signed_in_non_staff_see_no_details_either(reviewer_client, stakeholder_client):
    with override_settings(REDIS_URL=DOWN_REDIS):
        for client in (reviewer_client, stakeholder_client):
            assert client.get("/healthz").json() == {"status": "down"}


def test_staff_see_which_dependency_is_down_and_why(admin_client_):
    with override_settings(REDIS_URL=DOWN_REDIS):
        response = admin_client_.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["status"] == "down"
    assert body["broker"]["ok"] is False and "redis" in body["broker"]["detail"]
    assert body["database"]["ok"] is True
