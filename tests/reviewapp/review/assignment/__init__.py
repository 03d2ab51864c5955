"""Who holds which item: who may hold an assignment, judge once."""
