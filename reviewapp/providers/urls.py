app_name = "providers"
urlpatterns: list = []
