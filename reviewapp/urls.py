from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from reviewapp.core import api, views
from reviewapp.core.auth import RateLimitedLoginView

api_patterns = [
    path("me/", api.MeApi.as_view(), name="api-me"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("benchmarks/", include("benchmarks.api_urls")),
    path("cuad/", include("grading.api_urls")),
    path("review/", include("reviewapp.review.api_urls")),
    path("providers/", include("reviewapp.providers.api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    path("benchmarks/", include("benchmarks.urls")),
    path("cuad/", include("grading.urls")),
    path("review/", include("reviewapp.review.urls")),
    path("providers/", include("reviewapp.providers.urls")),
]
