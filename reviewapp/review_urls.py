"""Pages of the blinded review, under /review/."""

app_name = "review"
urlpatterns: list = []
