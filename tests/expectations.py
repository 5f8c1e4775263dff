"""Kept for tests that import it: the reader lives in the package (kubegap_lint.catalog.expectations)."""

from kubegap_lint.catalog.expectations import expected_findings

__all__ = ["expected_findings"]
