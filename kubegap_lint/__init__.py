"""kubegap-lint: offline linter for the resilience gaps of GPU workloads in Kubernetes manifests."""

__version__ = "0.2.0"

# Whether the tag v{__version__} exists. False as committed: only the release workflow sets it
# (scripts/stamp_release.py, after checking that the pushed tag names this version) in the sdist
# and wheel it builds, so only a build made from the tag links to the tag's docs (docs/sarif.md).
RELEASED = False
