"""The relevance_metrics command and the held-out exposure ledger."""
