"""A job's state in every kind's API, in the words of its pages (``reviewapp.jobs.controls.job_state``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reviewapp.jobs.controls import job_api_state


class JobStateOut(serializers.Serializer):
    state = serializers.CharField(help_text="queued, running, done, incomplete, failed (or the kind's own: cancelled)")
    state_text = serializers.CharField(help_text="the job's page's words: 'done', 'incomplete: N unknown, ..., "
                                                 "finish with <command>', 'failed: <reason>'")
    finish_command = serializers.CharField(help_text="the command that finishes the job; '' when there is none")


@extend_schema_field(JobStateOut)
class JobStateField(serializers.Field):
    """The state of the job being serialized (it reads the job itself)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value: Any) -> dict[str, str]:
        return job_api_state(value)
