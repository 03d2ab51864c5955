app_name = "cuad-api"
urlpatterns: list = []
