"""People and reliability (admin pages under /review/admin/): workload and reassignment, a reviewer's account,
the walk through disagreements.
"""
