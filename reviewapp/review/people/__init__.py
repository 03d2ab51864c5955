"""People and reliability (admin pages under /review/pools/): workload and reassignment, a reviewer's account,
the walk through disagreements.
"""
