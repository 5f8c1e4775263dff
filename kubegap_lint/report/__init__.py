"""Stage 6: render a LintResult. One module per format; each is a pure function to text."""
