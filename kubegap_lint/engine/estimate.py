"""How often a multi-pod GPU training workload should expect an interruption, at the rate a
published incident measured (Llama 3: per GPU-day). An order of magnitude for planning
checkpoints and restarts, not a prediction: the assumption travels with every figure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegap_lint.core.model import Location, ResourceRef


@dataclass(frozen=True)
class Estimate:
    resource: ResourceRef
    location: Location
    gpus: int
    interval_days: float


def basis_text(reference: dict[str, Any]) -> str:
    return (f"at Llama 3's rate of {reference['interruptions']} unexpected interruptions in "
            f"{reference['days']} days on up to {reference['gpus']:,} GPUs, counted per GPU-day"
            " (a lower bound on that job's rate; assumes failures scale with GPU count)")


def interval_text(days: float) -> str:
    if days >= 10:
        return f"~{days:.0f} days"
    if days >= 1:
        return f"~{days:.1f} days"
    hours = days * 24
    return f"~{hours:.1f} hours" if hours >= 1 else f"~{hours * 60:.0f} minutes"


def estimate(view: Mapping[str, Any], location: Location, ref: ResourceRef,
             reference: dict[str, Any] | None) -> Estimate | None:
    """The estimate for one workload view, or None when it is not multi-pod GPU training or
    its GPU count is unknown."""
    # Multi-pod GPU training, as the policies read it: more than one pod requests accelerators
    # (a CPU launcher or head beside one GPU pod does not count).
    gpu_pods = view.get("gpu_pods")
    # The rate was measured on GPUs (H100): TPUs and other accelerators get no figure.
    # A diagnostic (nccl-tests, nvidia-smi, sleep) is not training: no figure.
    if not reference or not view.get("training") or view.get("diagnostic") or not view.get("nccl_gpu") \
            or not (isinstance(gpu_pods, int) and gpu_pods > 1):
        return None
    gpus = view.get("gpus_total")
    if not isinstance(gpus, int) or gpus <= 0:
        return None
    per_gpu_day = reference["interruptions"] / (reference["days"] * reference["gpus"])
    return Estimate(ref, location, gpus, 1.0 / (gpus * per_gpu_day))
