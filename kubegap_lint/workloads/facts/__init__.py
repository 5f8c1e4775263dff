"""The facts of the workload view, one module per family."""
