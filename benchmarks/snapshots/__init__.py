"""Snapshots of a code compared: what a newer snapshot of a source added, removed and amended, and which targets
of the suites pinned to the older one changed (``/benchmarks/snapshots/``)."""
