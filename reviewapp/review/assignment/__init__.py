"""Who holds which item (/review/assignment/): the one function that puts items in front of reviewers, balanced
assignment, unassign and reassign, judge once (a reviewer's judgment serving every pool that asks the same question
of the same texts), and each reviewer's order of their assignments as stored (places, states, tallies, skips).
"""
