"""probe_window(probe), the policy function KG205 reads: the seconds a startup or liveness probe
lets a starting container live, with Kubernetes' defaults, and null where it cannot be known."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest

from kubegap_lint.catalog.functions import PolicyInterpreter


def window(probe: Any) -> Any:
    return PolicyInterpreter({}).search(jmespath.compile("probe_window(p)"), {"p": probe})


@pytest.mark.parametrize(("probe", "seconds"), [
    ({"httpGet": {"path": "/health"}}, 30),                                  # 0 + 3 x 10
    ({"initialDelaySeconds": 120}, 150),                                    # KServe's old vLLM delay
    ({"failureThreshold": 60, "periodSeconds": 10}, 600),                   # KServe's startupProbe
    ({"initialDelaySeconds": 30, "failureThreshold": 3, "periodSeconds": 10}, 60),
    ({"initialDelaySeconds": None, "periodSeconds": 5}, 15),                # null is the default
])
def test_window_with_kubernetes_defaults(probe: dict[str, Any], seconds: int) -> None:
    assert window(probe) == seconds


@pytest.mark.parametrize("probe", [
    None, {},                                              # no probe: nothing kills the container
    {"initialDelaySeconds": "${DELAY}"},                   # unrendered
    {"periodSeconds": "10"},                               # text is not judged
    {"failureThreshold": True},                            # a bool is not a count
    {"periodSeconds": 2.5},
])
def test_no_window_when_it_cannot_be_known(probe: Any) -> None:
    assert window(probe) is None
