"""Stage 2, workloads: the kind table (kinds), the cross-resource index (index) and the workload
view every policy is written against (views, viewfacts).
"""
