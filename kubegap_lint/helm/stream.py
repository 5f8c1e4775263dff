"""Turn the engine's rendered templates into the stream `helm template` prints.

The Helm engine returns one rendered text per template file; `helm template` then drops NOTES
and partials, splits each file into documents, sorts the documents that are not hooks by kind in
install order (stable: same kind keeps file-name order), prints CRDs first when asked, and prints
the hooks, sorted the same way, after the release manifest. This module redoes those steps so the
in-process render is byte for byte what the helm binary prints (tests/test_helm_engine.py checks
the manifest part against the engine's own install dry run).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Helm's document separator: `---` at the start, or after a line break, with the white space
# around it (pkg/release/v1/util SplitManifests).
_SEPARATOR = re.compile(r"(?:^|\s*\n)---\s*")
HOOK_ANNOTATION = "helm.sh/hook"

# Helm's InstallOrder: kinds not listed come last, in alphabetical order of kind.
INSTALL_ORDER = (
    "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
    "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
    "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding",
    "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
    "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
)
_RANK = {kind: index for index, kind in enumerate(INSTALL_ORDER)}


class StreamError(ValueError):
    """A rendered document helm itself could not read (it fails the whole render)."""


@dataclass(frozen=True)
class Document:
    source: str  # the template path, as `# Source:` prints it
    content: str
    kind: str
    hook: bool


def split_manifests(text: str) -> list[str]:
    """The documents of one rendered file, as helm splits it (blank ones dropped)."""
    return [part for part in _SEPARATOR.split(text.lstrip()) if part.strip()]


def _head(content: str, source: str) -> tuple[str, bool]:
    """The document's kind and whether it carries the hook annotation."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from kubegap_lint.input.limits import may_be_too_deep

    if may_be_too_deep(content):  # nested past the parsers' limit: the linter reports the depth (KG007)
        return _head_by_lines(content)
    # The C loader where ruamel.yaml.clib is installed (the pure-Python one took 1.5 s of a 1.7 s
    # in-process render of gpu-operator, measured with cProfile)
    reader = YAML(typ="safe")
    reader.allow_duplicate_keys = True  # helm reads the head leniently; the linter reports repeats
    try:
        data: Any = reader.load(content)
    except RecursionError:  # nested past the parser's stack: the linter reports the depth (KG007)
        return _head_by_lines(content)
    except YAMLError as exc:
        problem = str(getattr(exc, "problem", "") or exc).splitlines()[0]
        raise StreamError(f"YAML parse error on {source}: {problem}") from None
    if not isinstance(data, dict):
        return "", False
    kind = data.get("kind")
    metadata = data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    hook = isinstance(annotations, dict) and HOOK_ANNOTATION in annotations
    return (kind if isinstance(kind, str) else ""), hook


def _head_by_lines(content: str) -> tuple[str, bool]:
    """The kind and hook of a document too deep to parse, from its top-level `kind:` line."""
    kind = next((m.group(1) for m in re.finditer(r"^kind:[ \t]*['\"]?([A-Za-z0-9]+)", content, re.M)), "")
    return kind, HOOK_ANNOTATION in content


def is_rendered_manifest(path: str) -> bool:
    """Helm keeps every rendered file but NOTES.txt and partials (`_name`)."""
    base = posixpath.basename(path)
    return not base.startswith("_") and not path.endswith("NOTES.txt")


def documents(rendered: dict[str, str]) -> list[Document]:
    """The documents of a render, files in name order, documents in file order."""
    found: list[Document] = []
    for path in sorted(rendered):
        text = rendered[path]
        if not is_rendered_manifest(path) or not text.strip():
            continue
        for content in split_manifests(text):
            kind, hook = _head(content, path)
            found.append(Document(path, content, kind, hook))
    return found


def _sort_key(document: Document) -> tuple[int, str]:
    rank = _RANK.get(document.kind)
    return (0, f"{rank:04d}") if rank is not None else (1, document.kind)


def by_kind(items: Iterable[Document]) -> list[Document]:
    return sorted(items, key=_sort_key)  # sorted() is stable, like helm's SliceStable


def template_stream(rendered: dict[str, str], crds: Iterable[tuple[str, str]] = ()) -> str:
    """The text `helm template` prints for a render: CRDs (only those given), the release
    manifest, then the hooks."""
    every = documents(rendered)
    manifest = "".join(f"---\n# Source: {name}\n{data}\n" for name, data in crds)
    manifest += "".join(f"---\n# Source: {d.source}\n{d.content}\n" for d in by_kind(d for d in every if not d.hook))
    out = manifest.strip() + "\n"
    out += "".join(f"---\n# Source: {d.source}\n{d.content}\n" for d in by_kind(d for d in every if d.hook))
    return out
