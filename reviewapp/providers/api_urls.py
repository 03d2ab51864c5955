app_name = "providers-api"
urlpatterns: list = []
