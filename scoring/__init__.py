"""Pure scoring library shared by every job.

Plain Python, numpy and scipy only: no Django, no project imports. Selectors
turn querysets into dataclasses or arrays before calling in here, which keeps
every figure checkable against an independent reference in isolation.
"""
