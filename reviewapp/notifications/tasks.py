from celery import shared_task

from reviewapp.notifications.services import notices_send


@shared_task(name="reviewapp.notifications_send", ignore_result=True)
def notifications_send() -> dict:
    """Under celery beat: send the email notices due (reviewapp.notifications.services.notices_send)."""
    report = notices_send()
    return {"sent": report.sent, "failed": report.failed, "skipped": report.skipped}
