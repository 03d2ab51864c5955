"""What a reader is told: the conclusion sentence, the one-page summary, the plots."""
