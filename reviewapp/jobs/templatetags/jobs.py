"""``{% job_state_badge job %}``: a job's state word in a list of jobs, the word its page and API give."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from reviewapp.core.jobs import TrackedJob
from reviewapp.core.templatetags.glossary import status_word_filter
from reviewapp.jobs.controls import JobState, job_state_word

register = template.Library()


@register.simple_tag
def job_state_badge(job: TrackedJob) -> str:
    word = job_state_word(job)
    tone = JobState(word=word, text=word, finish_command="").tone
    return format_html('<span class="badge {}" data-testid="job-state">{}</span>', tone, status_word_filter(word))
