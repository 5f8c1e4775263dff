"""The command line: commands (main, helm), the options they share (options) and what they do
alike (common: one-line failures, settings, reporting).
"""
