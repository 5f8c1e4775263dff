"""Accelerator facts of a container: requests without the same limit.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

from kubegap_lint.core.coerce import as_dict
from kubegap_lint.core.keypaths import sub
from kubegap_lint.core.quantity import parse_quantity
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact


def _same_quantity(a: Any, b: Any) -> bool | None:
    """Equal as Kubernetes quantities; None when either is unrendered or unreadable."""
    left, right = parse_quantity(a), parse_quantity(b)
    if left is None or right is None:
        return None
    return left == right


_ACCELERATOR_NAMES: dict[tuple[str, tuple[str, ...]], bool] = {}  # bounded: names repeat


def _accelerator(name: str, patterns: Sequence[str]) -> bool:
    key = (name, tuple(patterns))
    found = _ACCELERATOR_NAMES.get(key)
    if found is None:
        found = any(fnmatch.fnmatchcase(name, p) for p in patterns)
        if len(_ACCELERATOR_NAMES) >= 4096:
            _ACCELERATOR_NAMES.clear()
        _ACCELERATOR_NAMES[key] = found
    return found


def accelerator_mismatches(raw: dict[str, Any], patterns: Sequence[str]) -> list[dict[str, Any]]:
    """Accelerator resources a container requests without the same limit: `name`, `request`,
    `limit` (null when missing). Extended resources cannot be overcommitted, so the API server
    rejects both; an unrendered value on either side is not compared."""
    resources = as_dict(raw.get("resources"))
    requests = as_dict(resources.get("requests"))
    limits = as_dict(resources.get("limits"))
    found = []
    for name in sorted(requests):
        if not _accelerator(str(name), patterns):
            continue
        if name not in limits:
            found.append({"name": name, "request": requests[name], "limit": None})
        elif type(requests[name]) is type(limits[name]) and requests[name] == limits[name]:
            continue  # the same value written twice (nearly always): the same quantity, or unreadable
        elif _same_quantity(requests[name], limits[name]) is False:
            found.append({"name": name, "request": requests[name], "limit": limits[name]})
    return found


@fact("accelerator_mismatches", "container", "list[AcceleratorMismatch]", "accelerator requests whose limit is missing or differs",
      init_containers=True)
def _accelerator_mismatches(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any],
                            context: ViewContext) -> list[dict[str, Any]]:
    mismatches = accelerator_mismatches(as_dict(container.get("raw")), context.gpu_patterns)
    where = as_dict(container.get("key_paths")).get(".")
    for mismatch in mismatches:  # located at the request that has no equal limit
        mismatch["key_paths"] = {".": sub(where, "resources", "requests", mismatch["name"]) if where is not None else None}
    return mismatches
