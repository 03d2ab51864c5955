"""What the product hands out as files: the formula-safe CSV writer, the one download response, the PDF renderer."""
