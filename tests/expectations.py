"""Kept for tests that import it: the reader lives in the package (kubegap_lint.expectations)."""

from kubegap_lint.expectations import expected_findings

__all__ = ["expected_findings"]
