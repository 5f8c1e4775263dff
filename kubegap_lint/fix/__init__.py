"""Stage 5, fixes (issue 32): after evaluation, the text edits that close a finding's gap.

Fixes are exact text edits at the positions of the nodes the findings name (their key paths),
computed once on the original text: comments, key order, quoting, indentation and every
untouched line stay as they were. docs/autofix.md describes the rules that have one.
"""
