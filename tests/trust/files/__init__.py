"""Untrusted files stay harmless: crafted contracts, rendered pages."""
