from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "reviewapp.providers"
    label = "providers"
    verbose_name = "Model providers"
