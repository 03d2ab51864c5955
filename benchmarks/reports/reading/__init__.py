"""What a reader of a report is told beside the figures: the one-sentence conclusion, the coverage banner,
the forest plot."""
