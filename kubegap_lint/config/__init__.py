"""The run's settings: the configuration file found (discover), read and validated (read,
validate), turned into one Settings object (fromfile, charts) with the command line over it (load).
"""
