"""Extraction jobs: launch, preflight, claims, the job page, resuming a stale one."""
