"""Plain building blocks every stage may use: the finding model, errors, data paths, quantities,
value coercion and JSON in pieces. Imports nothing else of the package.
"""
