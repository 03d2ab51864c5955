from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("reviewapp.sso.views")


# The names are the library's (its callback reverses "oidc_authentication_callback" for the redirect URI).
urlpatterns = [
    path("authenticate/", views.OidcAuthenticateView.as_view(), name="oidc_authentication_init"),
    path("callback/", views.OidcCallbackView.as_view(), name="oidc_authentication_callback"),
]
