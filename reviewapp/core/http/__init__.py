"""What every request and response goes through: API helpers, filters and parsers, bounded JSON, middleware,
lazily imported views, log filters, the one CSV writer and PDF path.
"""
