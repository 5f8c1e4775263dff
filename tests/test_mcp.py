"""`kubegap-lint mcp`: driven by the MCP SDK's own client over stdio (the server started as
`python -m kubegap_lint mcp`, as an agent starts it), and in-process for the one case that needs
a stand-in (the Helm engine made absent)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, REPO, run_cli

pytest.importorskip("mcp")

import anyio  # noqa: E402  (comes with mcp)
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
TOOLS = {"lint_manifests", "render_and_lint_chart", "list_rules", "explain_rule", "suggest_fixes"}
KG503_EXAMPLE = "examples/KG503-gpu-request-limit-mismatch/bad-request-without-limit.yaml"
FIXTURES = Path(__file__).parent / "fixtures" / "autofix"


def _params(root: Path, *extra: str) -> StdioServerParameters:
    env = {"PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(command=sys.executable, args=["-m", "kubegap_lint", "mcp", *extra],
                                 cwd=str(root), env=env)


def _session(root: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str) -> tuple[Any, list[Any]]:
    """Start the server at `root`, list its tools, make each call in one session."""
    async def go() -> tuple[Any, list[Any]]:
        async with Client(_params(root, *extra)) as client:
            tools = await client.list_tools()
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


def _all_findings(root: Path, arguments: dict[str, Any], tool: str = "lint_manifests") -> tuple[list, list]:
    """Every page of a lint, in one session: the findings and the pages' offsets."""
    async def go() -> tuple[list, list]:
        findings: list = []
        offsets: list = []
        async with Client(_params(root)) as client:
            offset: int | None = 0
            while offset is not None:
                result = await client.call_tool(tool, {**arguments, "offset": offset, "limit": 300})
                assert not result.is_error, result.content
                page = result.structured_content
                findings += page["findings"]
                offsets.append((page["offset"], page["next_offset"], page["total"]))
                offset = page["next_offset"]
        return findings, offsets

    return anyio.run(go)


def test_tools_are_listed_with_schemas_and_read_only_annotations() -> None:
    tools, _ = _session(REPO, [])
    assert {tool.name for tool in tools.tools} == TOOLS
    for tool in tools.tools:
        annotations = tool.annotations
        assert (annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint,
                annotations.open_world_hint) == (True, False, True, False), tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    lint = next(tool for tool in tools.tools if tool.name == "lint_manifests")
    assert set(lint.input_schema["properties"]) == {"text", "paths", "filename", "select", "ignore", "offset", "limit"}
    assert set(lint.output_schema["required"]) >= {"findings", "total", "next_offset", "errors", "exit_code"}
    fix = next(tool for tool in tools.tools if tool.name == "suggest_fixes")
    assert set(fix.input_schema["properties"]) == {"text", "path", "filename", "unsafe", "select", "ignore"}
    assert set(fix.output_schema["required"]) >= {"path", "fixes", "diff", "unsafe_not_in_diff"}


def test_lint_manifests_on_examples_equals_the_cli_json_paged() -> None:
    findings, offsets = _all_findings(REPO, {"paths": ["examples"]})
    cli = json.loads(run_cli("--format", "json", "examples").stdout)
    assert findings == cli["findings"]
    total = len(findings)
    assert total > 600  # the examples' findings: pages of 300, the last one partial
    pages = [(start, start + 300 if start + 300 < total else None, total) for start in range(0, total, 300)]
    assert offsets == pages


def test_lint_manifests_text_and_the_other_tools() -> None:
    text = GPU_JOB.read_text()
    _, (linted, named, rules, explained) = _session(REPO, [
        ("lint_manifests", {"text": text, "select": ["KG201"]}),
        ("lint_manifests", {"text": text, "select": ["KG201", "KG501"], "filename": "deploy/job.yaml"}),
        ("list_rules", {}),
        ("explain_rule", {"rule": "training-checkpoint-volume"}),
    ])
    page = linted.structured_content
    assert [(f["rule"], f["location"]["path"], f["location"]["line"], f["location"]["column"])
            for f in page["findings"]] == [("KG201", "manifest.yaml", 9, 5)]
    assert (page["exit_code"], page["errors"], page["next_offset"]) == (1, [], None)
    assert [(f["rule"], f["location"]["path"], f["location"]["line"])
            for f in named.structured_content["findings"]] == [("KG201", "deploy/job.yaml", 9),
                                                                ("KG501", "deploy/job.yaml", 12)]
    listed = rules.structured_content["rules"]
    cli_rules = run_cli("rules").stdout.decode().splitlines()
    assert [r["id"] for r in listed] == [line.split()[0] for line in cli_rules]
    kg201 = next(r for r in listed if r["id"] == "KG201")
    assert kg201["docs_url"].endswith("/docs/rules.md#kg201-training-checkpoint-volume")
    rule = explained.structured_content
    assert (rule["id"], rule["severity"], rule["docs_url"]) == ("KG201", "error", kg201["docs_url"])
    assert rule["evidence"] and all(e["urls"] for e in rule["evidence"])
    assert explained.content[0].text  # a text rendering for clients that ignore structured content


def test_render_and_lint_chart_equals_the_cli() -> None:
    from kubegap_lint.helm.sdk import available

    if not available():
        pytest.skip("the Helm engine (kubegap-lint[helm]) is not installed")
    chart = "examples/helm/gpu-train"
    findings, _ = _all_findings(REPO, {"chart": chart, "set": ["trainer.replicas=3"]}, "render_and_lint_chart")
    cli = json.loads(run_cli("helm", "--format", "json", "--set", "trainer.replicas=3", chart).stdout)
    assert findings == cli["findings"]
    assert findings  # the example chart has findings


def test_suggest_fixes_gives_the_cli_diff_and_writes_nothing() -> None:
    example = REPO / KG503_EXAMPLE
    before = example.read_bytes()
    _, (by_path, by_text) = _session(REPO, [
        ("suggest_fixes", {"path": KG503_EXAMPLE}),
        ("suggest_fixes", {"text": before.decode(), "filename": KG503_EXAMPLE}),
    ])
    cli = run_cli("lint", "--diff", KG503_EXAMPLE, cwd=REPO)
    assert cli.returncode == 1 and b"+              nvidia.com/gpu: 1\n" in cli.stdout
    for result in (by_path, by_text):
        assert not result.is_error, result.content
        got = result.structured_content
        assert got["diff"] == cli.stdout.decode()
        assert (got["path"], got["exit_code"], got["errors"]) == (KG503_EXAMPLE, 1, [])
        assert [(f["rule"], f["applicability"], f["line"]) for f in got["fixes"]] == [("KG503", "safe", 21)]
        assert got["fixes"][0]["diff"] == got["diff"]  # one fix: its own diff is the file's
    assert example.read_bytes() == before


def test_suggest_fixes_lists_unsafe_fixes_and_diffs_them_when_asked(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    manifest = tmp_path / "deploy" / "app.yaml"
    manifest.write_bytes((FIXTURES / "KG503-deployment.input.yaml").read_bytes())
    before = manifest.read_bytes()
    _, (safe, unsafe) = _session(tmp_path, [("suggest_fixes", {"path": "deploy/app.yaml"}),
                                            ("suggest_fixes", {"path": "deploy/app.yaml", "unsafe": True})])
    report = json.loads(run_cli("lint", "--format", "json", "--show-fixes", "deploy/app.yaml", cwd=tmp_path).stdout)
    expected = [(f["rule"], f["fingerprint"], f["fix"]["applicability"], f["fix"]["description"], f["fix"]["edits"])
                for f in report["findings"] if f["fix"]]
    assert [r for r, *_ in expected] == ["KG501", "KG503", "KG503"]
    for result, flags in ((safe, ()), (unsafe, ("--unsafe-fixes",))):
        got = result.structured_content
        assert [(f["rule"], f["fingerprint"], f["applicability"], f["description"], f["edits"])
                for f in got["fixes"]] == expected
        assert got["diff"] == run_cli("lint", "--diff", *flags, "deploy/app.yaml", cwd=tmp_path).stdout.decode()
    assert safe.structured_content["unsafe_not_in_diff"] == 1 and unsafe.structured_content["unsafe_not_in_diff"] == 0
    assert "+      - name: dshm\n" not in safe.structured_content["diff"]
    assert "+      - name: dshm\n" in unsafe.structured_content["diff"]
    assert manifest.read_bytes() == before


def _symlinked_root(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "job.yaml").write_text(GPU_JOB.read_text())
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "job.yaml").write_text(GPU_JOB.read_text())
    (root / "link").symlink_to(outside)
    return root


def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    root = _symlinked_root(tmp_path)
    refused = [["../secret/job.yaml"], [str(tmp_path / "secret")], ["link/job.yaml"], ["deploy/../../secret"]]
    _, results = _session(root, [("lint_manifests", {"paths": p}) for p in refused] + [
        ("lint_manifests", {"text": "a: 1", "filename": "/etc/passwd"}),
        ("render_and_lint_chart", {"chart": "../secret"}),
        ("suggest_fixes", {"path": "../secret/job.yaml"}),
        ("suggest_fixes", {"path": "link/job.yaml"}),
        ("suggest_fixes", {"text": "a: 1", "filename": "../secret/job.yaml"}),
        ("lint_manifests", {"paths": ["."], "select": ["KG201"]}),
        ("lint_manifests", {"paths": [str(root / "deploy" / "job.yaml")], "select": ["KG201"]}),
    ])
    # A folder that holds a link out of the workspace: the link is not followed (the CLI's rule).
    walked = results[-2].structured_content
    assert [(f["location"]["path"], f["location"]["line"]) for f in walked["findings"]] == [("deploy/job.yaml", 9)]
    for result in results[:-2]:
        assert result.is_error
        assert "outside the workspace root" in result.content[0].text or "Helm engine" in result.content[0].text
    inside = results[-1].structured_content  # an absolute path inside the root is fine
    assert [(f["location"]["path"], f["location"]["line"]) for f in inside["findings"]] == [("deploy/job.yaml", 9)]


def test_root_option_sets_the_workspace(tmp_path: Path) -> None:
    root = _symlinked_root(tmp_path)
    _, (inside, outside) = _session(REPO, [("lint_manifests", {"paths": ["deploy"], "select": ["KG201"]}),
                                           ("lint_manifests", {"paths": [str(REPO / "examples")]})],
                                    "--root", str(root))
    assert [f["location"]["path"] for f in inside.structured_content["findings"]] == ["deploy/job.yaml"]
    assert outside.is_error


def test_bad_arguments_are_tool_errors_and_the_server_goes_on() -> None:
    _, results = _session(REPO, [
        ("lint_manifests", {}),
        ("lint_manifests", {"text": "a: 1", "paths": ["examples"]}),
        ("lint_manifests", {"paths": ["examples"], "limit": 0}),
        ("lint_manifests", {"paths": "examples"}),
        ("lint_manifests", {"paths": ["examples"], "select": ["--config=/etc/x"]}),
        ("lint_manifests", {"paths": ["examples"], "select": ["KG999"]}),
        ("lint_manifests", {"text": ""}),
        ("explain_rule", {"rule": "no-such-rule"}),
        ("explain_rule", {}),
        ("render_and_lint_chart", {"chart": "examples/helm/gpu-train", "set": ["no-equals-sign"]}),
        ("suggest_fixes", {}),
        ("suggest_fixes", {"path": "examples"}),
        ("suggest_fixes", {"path": KG503_EXAMPLE, "unsafe": "maybe"}),
        ("suggest_fixes", {"path": KG503_EXAMPLE, "select": ["KG999"]}),
        ("no_such_tool", {}),
        ("list_rules", {}),
    ])
    messages = [r.content[0].text if r.is_error else None for r in results]
    assert all(messages[:-1]), messages
    assert "either text or paths" in messages[0] and "either text or paths" in messages[1]
    assert "greater than or equal to 1" in messages[2]
    assert "rule ids or names" in messages[4]
    assert "KG999" in messages[5]
    assert "no YAML document" in messages[6]
    assert "unknown rule 'no-such-rule'" in messages[7]
    assert "KEY=VALUE" in messages[9] or "Helm engine" in messages[9]
    assert "either text or path" in messages[10]
    assert "examples is not a file" in messages[11]
    assert "valid boolean" in messages[12]
    assert "KG999" in messages[13]
    assert results[-1].structured_content["rules"]  # still serving


def test_without_the_helm_engine_the_chart_tool_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (the SDK's in-memory client), with the engine's check as a stand-in that says
    it is absent: the only way to see that branch with the engine installed."""
    from kubegap_lint.helm import sdk
    from kubegap_lint.serve.mcp import build

    monkeypatch.setattr(sdk, "available", lambda: False)

    async def go() -> Any:
        async with Client(build(str(REPO))) as client:
            return await client.call_tool("render_and_lint_chart", {"chart": "examples/helm/gpu-train"})

    result = anyio.run(go)
    assert result.is_error
    assert result.content[0].text.endswith(
        "the Helm engine is not installed: install kubegap-lint[helm] to render charts")


def test_the_cli_start_up_does_not_import_the_servers() -> None:
    code = ("import sys, runpy; sys.argv=['kubegap-lint', '--version']\n"
            "try:\n runpy.run_module('kubegap_lint', run_name='__main__')\n"
            "except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pygls', 'lsprotocol', 'pydantic')"
            " or m.startswith('kubegap_lint.serve')))")
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    lint = subprocess.run([sys.executable, "-X", "importtime", "-m", "kubegap_lint", "--select", "KG201", str(GPU_JOB)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    imported = {line.split("|")[-1].strip().split(".")[0] for line in lint.stderr.splitlines() if "|" in line}
    assert not imported & {"mcp", "pygls", "lsprotocol", "pydantic", "anyio"}
