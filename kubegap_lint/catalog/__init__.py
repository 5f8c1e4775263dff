"""The rules as data: policy and incident files loaded, validated (datafile, validcache) and cached,
the JMESPath functions and pattern checks policies may use, the generated rule reference (docs)
and the example annotations (expectations).
"""
