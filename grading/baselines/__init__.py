"""Offline CUAD baselines beside the local MiniLM extractor: nearest labelled example (cross-validated by
contract) and clause-heading/keyword rules; ``systems`` names what each offline system is."""
