"""Stage 2, workloads: the kind table (kinds), the cross-resource index (index) and the workload
view every policy is written against: views.workload_view, its entry point, builds it from
the pod records of pods.pods_of (records, walked, trainjob), as podview shapes them, with the
facts of the registry (facts/).
"""
