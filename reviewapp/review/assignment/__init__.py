"""Who holds which item: the one function that puts items in front of reviewers, balanced assignment, and judge
once (a reviewer's judgment serving every pool that asks the same question of the same texts).
"""
