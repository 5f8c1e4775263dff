"""Stores that keep a run's memory bounded: a sorted spill to disk for findings, an
in-order spill of plain records for the workloads that wait for the whole input (records.py),
and the cross-resource facts (in dictionaries, or SQLite past a limit).
"""
