"""Only Kubernetes is linted: which input faults a document's reading reports.

A folder holds more than manifests (docker-compose files, tsconfig.json with comments, CI
configuration), and `kubegap-lint .` must not judge them. The rule, per document
(docs/command-line.md):

- a document that parses to a Kubernetes object (`apiVersion` and `kind`) reports its faults;
- a document that parses to something else reports none (a duplicate key in a compose file is
  that file's business);
- a document that does not parse reports its faults when its text, as far as it reads, has
  `apiVersion:` and `kind:` keys, or, for a syntax error, when it is a `.yaml`/`.yml` file (or
  stdin, or a rendered stream) not named like a well-known file that is not Kubernetes;
- refusals that protect the run (alias bombs, documents too large, text that is not UTF-8) are
  always reported.
"""

from __future__ import annotations

import re
from typing import Any

ALWAYS = frozenset({"yaml-alias-expansion", "document-too-large"})

_KEY = r"(?:^|[{{,])[ \t]*[\"']?{}[\"']?[ \t]*:"  # a key at a line's start, or in a flow mapping
_API_VERSION = re.compile(_KEY.format("apiVersion"), re.MULTILINE)
_KIND = re.compile(_KEY.format("kind"), re.MULTILINE)

# YAML files that are known not to be Kubernetes manifests, by name (lower case).
_NOT_KUBERNETES = re.compile(
    r"(docker-)?compose([.-][^/]*)?\.ya?ml|action\.ya?ml|mkdocs\.ya?ml|environment\.ya?ml|"
    r"pnpm-lock\.yaml|(openapi|swagger)([.-][^/]*)?\.ya?ml|codecov\.ya?ml|taskfile\.ya?ml|"
    r"buf(\.gen|\.work)?\.yaml|dependabot\.ya?ml|\.?gitlab-ci\.ya?ml|values([.-][^/]*)?\.ya?ml")


def looks_kubernetes(text: str) -> bool:
    """The text has `apiVersion:` and `kind:` keys (YAML, or JSON's quoted keys)."""
    return _API_VERSION.search(text) is not None and _KIND.search(text) is not None


def manifest_name(path: str) -> bool:
    """A path whose syntax errors are reported even when nothing in it reads as Kubernetes."""
    if path.startswith("<"):  # stdin, a rendered stream
        return True
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.endswith((".yaml", ".yml")) and _NOT_KUBERNETES.fullmatch(name) is None


def reported(rule: str, path: str, text: str, data: Any, kubernetes: bool) -> bool:
    """Whether a fault of a document is reported; `data` is what it parsed to (None when it
    did not), `kubernetes` whether that is a Kubernetes object."""
    if rule in ALWAYS or kubernetes:
        return True
    if data is not None:
        return False
    if looks_kubernetes(text):
        return True
    return rule == "yaml-syntax-error" and manifest_name(path)
