"""What `--fix` does for each rule, in one line, for `explain` and docs/autofix.md."""

from __future__ import annotations

from kubegap_lint.fix.compute import USER_DECIDES

AUTOFIX = {
    "KG101": ("unsafe", "adds a hard zone spread (maxSkew 1, DoNotSchedule) selecting the pod template's labels"),
    "KG102": ("unsafe", "makes the soft spread over a failure domain hard (DoNotSchedule); a soft anti-affinity"
              " gets a hard zone spread"),
    "KG103": ("unsafe", "appends a PodDisruptionBudget (maxUnavailable 1) selecting the pod template's labels, when"
              " no budget selects the pods"),
    "KG104": ("unsafe", "adds a preStop sleep of 15 s and a grace period of 60 s (KServe's values), or, when the"
              " engine's drain is set, the grace period it needs"),
    "KG107": ("unsafe", "makes a Recreate rollout a RollingUpdate with maxSurge 0 and maxUnavailable 1, or sets a"
              " maxUnavailable of every replica to 1 (the policy's fix)"),
    "KG205": ("unsafe", "adds a startupProbe with the liveness probe's handler, every 10 s, allowing"
              " model_load_seconds to load (KServe's 60 x 10 s), or raises a short startup probe's failureThreshold"
              " to that window; no handler to copy: no edit"),
    "KG301": ("safe", "sets TORCH_NCCL_ASYNC_ERROR_HANDLING (or the old name, where it is the one read) to 3"),
    "KG302": ("unsafe", "sets TORCH_NCCL_ENABLE_MONITORING to 1 and the blocking wait to 0 (PyTorch's defaults), and"
              " a heartbeat timeout above the limit to 600 s (the policy's example): unsafe when that value is written"),
    "KG303": ("unsafe", "sets the flight-recorder buffer to 2000 under both names, dumping on timeout on, and the"
              " dump path on the persistent volume the GPU containers mount (none: no edit)"),
    "KG304": ("unsafe", "as KG303: dumping on, and the dump path on the persistent volume the GPU containers mount"),
    "KG305": ("unsafe", "renames the variable to the known name it is closest to (the did-you-mean name)"),
    "KG306": ("safe", "sets NCCL_DEBUG to WARN"),
    "KG307": ("safe", "sets NCCL_IB_TIMEOUT to 20 and NCCL_IB_RETRY_CNT to 7 (NCCL's current defaults)"),
    "KG401": ("unsafe", "sets a JobSet's failurePolicy.maxRestarts to 10 or a RayJob's backoffLimit to 3 (the"
              " policy's examples); other kinds: no edit"),
    "KG404": ("unsafe", "sets a nccl-tests run's activeDeadlineSeconds to 1800 (the policy's example); training"
              " runs: no edit"),
    "KG405": ("safe", "adds a podFailurePolicy rule that ignores DisruptionTarget (unsafe when it joins rules you"
              " wrote, whose order matters, or turns a written podReplacementPolicy to Failed)"),
    "KG406": ("safe", "sets leaderWorkerTemplate.restartPolicy to RecreateGroupOnPodRestart, LeaderWorkerSet's"
              " default"),
    "KG407": ("safe", "sets the Job's podReplacementPolicy to Failed"),
    "KG501": ("unsafe", "mounts an emptyDir (medium Memory, sizeLimit min_shm_size) at /dev/shm in each GPU"
              " container: size it for your data loaders"),
    "KG503": ("safe", "sets each accelerator's limit equal to its request"),
}


def describe(rule_id: str) -> str | None:
    """`--fix` (safe) or `--fix --unsafe-fixes`: what it does; None when the rule has no fix."""
    if rule_id in AUTOFIX:
        applicability, what = AUTOFIX[rule_id]
        flags = "--fix" if applicability == "safe" else "--fix --unsafe-fixes"
        return f"Autofix ({applicability}, `{flags}`): {what}."
    if rule_id in USER_DECIDES:
        return f"Autofix: none, by design: {USER_DECIDES[rule_id]}."
    return None
