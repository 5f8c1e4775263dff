"""kubegap-lint: offline linter for the resilience gaps of GPU workloads in Kubernetes manifests."""

__version__ = "0.1.0"
