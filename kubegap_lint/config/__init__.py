"""The run's settings: configuration files found and validated (load) into one Settings object.
"""
