app_name = "cuad"
urlpatterns: list = []
