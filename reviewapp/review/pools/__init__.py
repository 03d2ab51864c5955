"""Pools (/review/pools/): a declared set of items, its label-deciding settings and versions, its guidelines and
known-answer items; the pool list and a pool's page.
"""
