"""The whole site in chromium: sign-in, every page, the Content-Security-Policy."""
