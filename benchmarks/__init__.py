"""Statute relevance benchmark: corpora, suites, keyword retrieval, rerank runs, reports."""
