"""Findings a user has accepted: inline and annotation directives (suppressor), the baseline file,
and the line-independent fingerprint both use.
"""
