"""The provider layer: httpx clients, budget preflight and the receipt ledger, shared by every job."""
