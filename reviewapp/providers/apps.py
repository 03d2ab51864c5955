from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "reviewapp.providers"
    label = "providers"
    product_data = True
    verbose_name = "Model providers"
