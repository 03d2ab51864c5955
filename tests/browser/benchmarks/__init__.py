"""Suites and reports in chromium: the workbench, target confirmation, the PDF summary."""
