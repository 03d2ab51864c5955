"""API of the blinded review, under /api/review/."""

app_name = "review-api"
urlpatterns: list = []
