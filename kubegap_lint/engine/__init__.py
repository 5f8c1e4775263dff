"""The run: the loop (run) that reads, builds views and evaluates every policy (evaluate)
into a LintResult; worker processes (parallel); where findings point (locate); the
interruption estimate (estimate).
"""
