"""Extraction runs made here: the local extractor, LLM providers, model servers."""
