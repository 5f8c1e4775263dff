"""`kubegap-lint server`: the language server driven by pygls's own LSP client over stdio (the
server started as `python -m kubegap_lint server`, as an editor starts it)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, REPO, run_cli

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

FIX_ALL = "source.fixAll.kubegap-lint"
KG503_FIXTURE = Path(__file__).parent / "fixtures" / "autofix" / "KG503-deployment.input.yaml"
GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
WAIT = 60  # seconds for a lint's diagnostics on a loaded machine


class Editor:
    """A client that keeps every publishDiagnostics notification, by document."""

    def __init__(self) -> None:
        self.client = LanguageClient("test-editor", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.arrived = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self.arrived.set()

    async def start(self, root: Path, capabilities: types.ClientCapabilities | None = None) -> types.InitializeResult:
        env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        await self.client.start_io(sys.executable, "-m", "kubegap_lint", "server", cwd=str(root), env=env)
        result = await self.client.initialize_async(types.InitializeParams(
            capabilities=capabilities or types.ClientCapabilities(), root_uri=from_fs_path(str(root)),
            process_id=os.getpid()))
        self.client.initialized(types.InitializedParams())
        return result

    async def next_for(self, uri: str, count: int) -> types.PublishDiagnosticsParams:
        """The `count`-th publication for `uri` (1-based), waiting for it."""
        async def wait() -> None:
            while len(self.published.get(uri, [])) < count:
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(wait(), WAIT)
        return self.published[uri][count - 1]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def _open(editor: Editor, path: Path, text: str, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    editor.client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=version, text=text)))
    return uri


def _cli_findings(path: Path, cwd: Path) -> list[tuple[str, int, int]]:
    report = json.loads(run_cli("--format", "json", "--no-repo-facts", str(path), cwd=cwd).stdout)
    return [(f["rule"], f["location"]["line"], f["location"]["column"])
            for f in report["findings"] if f["suppressed"] is None]


def _seen(published: types.PublishDiagnosticsParams) -> list[tuple[Any, int, int]]:
    """(code, line, column) 1-based, as the CLI counts (the manifests here are ASCII)."""
    return sorted((d.code, d.range.start.line + 1, d.range.start.character + 1) for d in published.diagnostics)


def _run(body: Any) -> Any:
    return asyncio.run(body)


def test_diagnostics_equal_the_cli_and_follow_changes(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(GPU_JOB.read_text())
    (tmp_path / ".kubegap-lint.yaml").write_text("ignore: [KG403]\n")  # found as the CLI finds it
    changed_text = GPU_JOB.read_text().replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8").replace(
        "      restartPolicy: OnFailure\n", "      restartPolicy: OnFailure\n      volumes:\n"
        "        - name: ckpt\n          persistentVolumeClaim:\n            claimName: ckpt\n")
    changed = tmp_path / "changed.yaml"
    changed.write_text(changed_text)
    expected_before = sorted(_cli_findings(manifest, tmp_path))
    expected_after = sorted(_cli_findings(changed, tmp_path))
    assert expected_before != expected_after  # the edit changes the findings
    assert expected_before == [("KG201", 9, 5), ("KG501", 12, 11)]  # KG403 ignored by the configuration
    assert expected_after == [("KG201", 11, 7), ("KG501", 16, 11)]

    async def session() -> tuple[Any, Any, Any]:
        editor = Editor()
        init = await editor.start(tmp_path)
        try:
            uri = _open(editor, manifest, manifest.read_text())
            first = await editor.next_for(uri, 1)
            for version, text in ((2, "apiVersion: batch/v1\nkind: Job\n"), (3, changed_text)):  # typed fast
                editor.client.text_document_did_change(types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
            second = await editor.next_for(uri, 2)  # one lint, of the text after the pause
            editor.client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            third = await editor.next_for(uri, 3)
            assert (third.version, _seen(third)) == (3, _seen(second))
            return init, first, second
        finally:
            await editor.stop()

    init, first, second = _run(session())
    assert init.server_info.name == "kubegap-lint"
    assert set(init.capabilities.code_action_provider.code_action_kinds) == {types.CodeActionKind.QuickFix, FIX_ALL}
    assert _seen(first) == expected_before
    assert (first.version, second.version) == (1, 3)
    assert _seen(second) == expected_after
    kg201 = next(d for d in first.diagnostics if d.code == "KG201")
    assert kg201.severity == types.DiagnosticSeverity.Error
    assert kg201.source == "kubegap-lint"
    assert kg201.code_description.href.endswith("/docs/rules.md#kg201-training-checkpoint-volume")
    assert kg201.message.startswith("training-checkpoint-volume: Job finetune: pods (1 GPU each)")
    assert kg201.related_information and all(
        info.location.uri.startswith("https://") and info.message.startswith("evidence: ")
        for info in kg201.related_information)
    assert kg201.range.start == types.Position(line=8, character=4)
    assert kg201.range.end.line >= 8


def test_not_a_manifest_and_a_broken_configuration(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".kubegap-lint.yaml").write_text("select: [KG999]\n")
    (broken / "job.yaml").write_text(GPU_JOB.read_text())

    async def session() -> tuple[Any, Any]:
        editor = Editor()
        await editor.start(tmp_path)
        try:
            plain = await editor.next_for(_open(editor, tmp_path / "values.yaml", "replicas: 3\n"), 1)
            bad = await editor.next_for(_open(editor, broken / "job.yaml", GPU_JOB.read_text()), 1)
            return plain, bad
        finally:
            await editor.stop()

    plain, bad = _run(session())
    assert list(plain.diagnostics) == []
    assert [(d.code, d.severity, d.range.start.line) for d in bad.diagnostics] == [
        ("input-error", types.DiagnosticSeverity.Error, 0)]
    assert "KG999" in bad.diagnostics[0].message
    assert bad.diagnostics[0].message.startswith("not linted: configuration: ")


def _apply(text: str, edit: types.WorkspaceEdit, version: int) -> str:
    """Apply a WorkspaceEdit as an editor does: every range on the original text (ASCII here, so
    UTF-16 units are characters), on the document version it names."""
    (change,) = edit.document_changes
    assert change.text_document.version == version
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return min(starts[min(position.line, len(starts) - 1)] + position.character, len(text))

    for text_edit in sorted(change.edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(text_edit.range.start)] + text_edit.new_text + text[offset(text_edit.range.end):]
    return text


def _actions(editor: Editor, uri: str, diagnostics: list[types.Diagnostic], only: list[str]) -> Any:
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    return editor.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostics[0].range if diagnostics else whole,
        context=types.CodeActionContext(diagnostics=diagnostics, only=only)))


def test_quick_fix_and_fix_all_from_the_autofix(tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    text = KG503_FIXTURE.read_text()
    manifest.write_text(text)
    capabilities = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)))

    async def session() -> tuple[Any, ...]:
        editor = Editor()
        await editor.start(tmp_path, capabilities)
        try:
            uri = _open(editor, manifest, text)
            first = await editor.next_for(uri, 1)
            kg503 = next(d for d in first.diagnostics if d.code == "KG503")
            kg501 = next(d for d in first.diagnostics if d.code == "KG501")
            quick = await _actions(editor, uri, [kg503, kg501], [types.CodeActionKind.QuickFix])
            fix_all = await _actions(editor, uri, [], [types.CodeActionKind.SourceFixAll])
            fixed = _apply(text, quick[0].edit, 1)
            editor.client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
            stale = await _actions(editor, uri, [kg503], [types.CodeActionKind.QuickFix])  # not linted yet
            second = await editor.next_for(uri, 2)
            return first, kg503, quick, fix_all, fixed, stale, second
        finally:
            await editor.stop()

    first, kg503, quick, fix_all, fixed, stale, second = _run(session())
    assert kg503.data["rule"] == "KG503" and kg503.data["key_path"]  # what maps the request to the fix
    assert [(a.kind, a.is_preferred, a.diagnostics[0].code) for a in quick] == [
        (types.CodeActionKind.QuickFix, True, "KG503"), (types.CodeActionKind.QuickFix, False, "KG501")]
    assert "unsafe" in quick[1].title and "unsafe" not in quick[0].title
    assert fixed != text and "nvidia.com/gpu: 1" in fixed.split("limits:")[1]
    assert list(stale) == []  # the document changed since its lint: no edit on an old version
    assert second.version == 2
    still = [(d.code, d.range.start.line) for d in second.diagnostics]
    assert ("KG503", kg503.range.start.line) not in still  # the fixed finding is gone...
    assert len([c for c, _ in still if c == "KG503"]) == 1 and ("KG501", 14) in still  # ...the others stay
    assert [(a.kind, a.title) for a in fix_all] == [(FIX_ALL, "kubegap-lint: fix all safe fixes in the file")]
    copy = tmp_path / "cli" / "app.yaml"
    copy.parent.mkdir()
    copy.write_text(text)
    run_cli("lint", "--fix", "--no-repo-facts", str(copy), cwd=tmp_path)
    assert copy.read_text() != text and "dshm" not in copy.read_text()  # the safe fixes only
    assert _apply(text, fix_all[0].edit, 1) == copy.read_text()
