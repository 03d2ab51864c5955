"""CUAD benches: load + sample + grade as whole processes (beside the plain-Python peer grader in
``plain_cuad_grader.py``), grading speed, the CUAD leaderboard and the CUAD console."""
