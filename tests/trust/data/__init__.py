"""What is kept and what leaks: backup and restore, planted secrets, disclosure, CSV formulas."""
