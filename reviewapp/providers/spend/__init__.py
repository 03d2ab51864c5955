"""What a run may spend: the budget arithmetic and the preflight check before each request."""
