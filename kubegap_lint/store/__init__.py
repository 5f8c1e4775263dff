"""Stores that keep a run's memory bounded: a sorted spill to disk for findings, and the
cross-resource facts (in dictionaries, or SQLite past a limit).
"""
