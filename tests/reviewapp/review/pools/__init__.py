"""A pool's pages and settings: the admin pages, jobs finding their pools."""
