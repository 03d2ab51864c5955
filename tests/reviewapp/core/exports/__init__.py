"""The files the product hands out."""
