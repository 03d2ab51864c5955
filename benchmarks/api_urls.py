app_name = "benchmarks-api"
urlpatterns: list = []
