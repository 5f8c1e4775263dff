"""schemas/config.schema.json: every configuration example in the repository and its docs is
valid against it, and the docs tell yaml-language-server where it is."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
from conftest import REPO
from ruamel.yaml import YAML

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SCHEMA = json.loads((REPO / "schemas" / "config.schema.json").read_text())
CONFIG_KEYS = set(SCHEMA["properties"])
MARKER = re.compile(r"^#.*\.kubegap-lint\.yaml", re.MULTILINE)
BLOCK = re.compile(r"^```(yaml|toml)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCHEMA_LINE = ("# yaml-language-server: $schema="
               "https://raw.githubusercontent.com/kubegap/kubegap-lint/main/schemas/config.schema.json")


def _documents() -> list[Path]:
    return sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "examples").rglob("*.md")])


def _examples() -> list[tuple[str, Any]]:
    """(where, data) of each configuration example: the .kubegap-lint.yaml files, the YAML
    blocks of the docs marked `# .kubegap-lint.yaml` or made of configuration keys only, and the
    [tool.kubegap-lint] tables."""
    found: list[tuple[str, Any]] = []
    for path in sorted(REPO.rglob(".kubegap-lint.yaml")):
        if ".venv" not in path.parts and "node_modules" not in path.parts:
            found.append((str(path.relative_to(REPO)), YAML(typ="safe").load(path.read_text())))
    for doc in _documents():
        for match in BLOCK.finditer(doc.read_text()):
            kind, body = match.groups()
            where = f"{doc.relative_to(REPO)}:{doc.read_text()[:match.start()].count(chr(10)) + 1}"
            if kind == "toml":
                table = tomllib.loads(body).get("tool", {}).get("kubegap-lint") if "[tool.kubegap-lint" in body else None
                if table is not None:
                    found.append((where, table))
                continue
            try:
                data = YAML(typ="safe").load(io.StringIO(body))
            except Exception:  # noqa: BLE001 - a block of several documents or a fragment: not a config
                continue
            if MARKER.search(body) or (isinstance(data, dict) and data and set(data) <= CONFIG_KEYS):
                found.append((where, data))
    return found


def test_every_configuration_example_is_valid() -> None:
    examples = _examples()
    wheres = [where for where, _ in examples]
    # The examples known today: a new one is checked too, a lost one fails here.
    assert {w.split(":")[0] for w in wheres} >= {"README.md", "docs/configuration.md", "docs/custom-policies.md",
                                                 "docs/helm-and-pre-commit.md", "examples/custom-policy/.kubegap-lint.yaml"}
    problems = []
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for where, data in examples:
        problems += [f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
    assert problems == []


def test_the_schema_rejects_what_the_loader_rejects(tmp_path: Path) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid({"ignored": ["KG201"]})  # an unknown key
    assert not validator.is_valid({"fail_on": "fatal"})
    assert not validator.is_valid({"charts": [{"values": ["v.yaml"]}]})  # a chart without its path


def test_docs_name_the_schema_for_yaml_language_server() -> None:
    from kubegap_lint.report.sarif import REPOSITORY_URL

    owner_repo = REPOSITORY_URL.removeprefix("https://github.com/")
    assert f"raw.githubusercontent.com/{owner_repo}/main/schemas/config.schema.json" in SCHEMA_LINE
    for doc in ("docs/configuration.md", "docs/editors-and-agents.md"):
        assert SCHEMA_LINE in (REPO / doc).read_text(), doc
    # The line is a YAML comment: a configuration that starts with it is still valid.
    config = REPO / "examples" / "custom-policy" / ".kubegap-lint.yaml"
    data = YAML(typ="safe").load(SCHEMA_LINE + "\n" + config.read_text())
    assert jsonschema.Draft202012Validator(SCHEMA).is_valid(data)
