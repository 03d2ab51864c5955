"""What people made is kept: append-only tables."""
