"""Single sign-on through the firm's identity provider (OpenID Connect), and the sessions an admin can end."""
