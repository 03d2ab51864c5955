"""Runs brought in: pasted or uploaded, their scope, confidences."""
