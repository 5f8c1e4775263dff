"""The known NCCL_/TORCH_NCCL_/TORCH_FR_ variable names (policies/nccl-env-names.yaml), kept
as data with their sources; the catalog hands them to policies as param('known_nccl_env') and
param('nccl_env_hints')."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubegap_lint.catalog.datafile import load_validated

NAMES_FILE = "nccl-env-names.yaml"


def load_env_names(path: Path) -> dict[str, Any]:
    """{'known_nccl_env': [names, sorted, once each], 'nccl_env_hints': {name: advice}}."""
    data, _ = load_validated(path, "nccl-env-names.schema.json")
    names = sorted({name for group in data["groups"] for name in group["names"]})
    hints = {str(k): " ".join(str(v).split()) for k, v in (data.get("hints") or {}).items()}
    return {"known_nccl_env": names, "nccl_env_hints": hints}
