"""Stage 4, output: text, JSON, SARIF and GitHub workflow commands, chosen by name in formats.
"""
