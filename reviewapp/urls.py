from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path

from reviewapp.core.http.lazy_views import lazy_module

SpectacularAPIView = lazy_module("drf_spectacular.views").SpectacularAPIView
SpectacularSwaggerSplitView = lazy_module("drf_spectacular.views").SpectacularSwaggerSplitView
api = lazy_module("reviewapp.core.http.api")
views = lazy_module("reviewapp.core.views")
RateLimitedLoginView = lazy_module("reviewapp.core.auth.credentials").RateLimitedLoginView
glossary_view = lazy_module("reviewapp.core.glossary").glossary_view
notification_views = lazy_module("reviewapp.notifications.views")
SignOutView = lazy_module("reviewapp.sso.views").SignOutView

api_patterns: list[URLPattern | URLResolver] = [
    path("me/", api.MeApi.as_view(), name="api-me"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file (?script), so the page needs no inline script.
    # Its page is the project's template (templates/api/swagger_ui.html): lang, title, contrast (axe).
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html"),
         name="api-docs"),
    path("benchmarks/", include("benchmarks.api_urls")),
    path("cuad/", include("grading.api_urls")),
    path("review/", include("reviewapp.review.api_urls")),
    path("providers/", include("reviewapp.providers.api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("glossary/", glossary_view, name="glossary"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", SignOutView.as_view(), name="logout"),
    path("accounts/oidc/", include("reviewapp.sso.urls")),
    path("accounts/password/", views.OwnPasswordChange.as_view(), name="password-change"),
    path("accounts/tokens/", views.tokens, name="tokens"),
    path("accounts/keyboard/", views.keyboard, name="keyboard"),
    path("accounts/notifications/", notification_views.preferences, name="notification-preferences"),
    path("accounts/tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_patterns)),
    path("benchmarks/", include("benchmarks.urls")),
    path("cuad/", include("grading.urls")),
    path("review/", include("reviewapp.review.urls")),
    path("providers/", include("reviewapp.providers.urls")),
    path("jobs/", include("reviewapp.jobs.urls")),
]

# JSON under /api/, the site's pages elsewhere (reviewapp.core.http.errors says why).
handler400 = "reviewapp.core.http.errors.bad_request"
handler403 = "reviewapp.core.http.errors.permission_denied"
handler404 = "reviewapp.core.http.errors.not_found"
handler500 = "reviewapp.core.http.errors.server_error"
