"""The dataset page and API: seed, parameters, file hash, counts and the length chart."""

from __future__ import annotations


def test_the_dataset_page_shows_seed_parameters_hash_counts_and_a_chart(loaded, stakeholder_client):
    page = stakeholder_client.get("/cuad/dataset/").content.decode()
    assert loaded.dataset.sha256 in page and "--seed 42" in page and "<svg" in page
    data = stakeholder_client.get("/api/v1/cuad/dataset/").json()
    assert data["sha256"] == loaded.dataset.sha256 and data["parameters"]["seed"] == 42
    assert {t["name"] for t in data["types"]} == {"Document Name", "Governing Law", "Anti-Assignment"}
    counts = {t["name"]: t["sampled"] for t in data["types"]}
    assert counts == {"Document Name": 4, "Governing Law": 4, "Anti-Assignment": 2}
