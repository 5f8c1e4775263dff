"""Reading, the first step of a run: paths and stdin (sources), bytes to lines (text), document splitting and
line scan (scan), the C parser with positions (parse), resources and input faults (read), and
streaming a large input twice (stream). Size and depth limits live in limits.
"""
