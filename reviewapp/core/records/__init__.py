"""What people made is kept: one way to hash, text every database can store, append-only tables enforced by the
database.
"""
