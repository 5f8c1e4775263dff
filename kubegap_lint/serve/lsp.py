"""`kubegap-lint server`: a language server over stdio (pygls) that publishes the linter's
findings as diagnostics while a manifest is edited.

Diagnostics come on open and save at once, and on change after a short pause (typing does not
start a lint a keystroke). Each has the rule id as its code, a link to the rule's docs (the
URL SARIF's helpUri gives), the range of the node, and the rule's evidence as related
information, and `data` that finds its finding again for a code action. The configuration is
found from the file as the CLI finds it. Code actions come from the autofix (serve/actions.py):
a quick fix per finding that has one, and "fix all safe" for the file.
Imported only by the `server` subcommand.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from kubegap_lint import __version__
from kubegap_lint.core.model import Finding, InputError, Severity
from kubegap_lint.serve import fixes
from kubegap_lint.serve.actions import FIX_ALL, Snapshot, code_actions, finding_data
from kubegap_lint.serve.documents import DocumentLinter, Linted, holds_manifests
from kubegap_lint.serve.rules import docs_url

SOURCE = "kubegap-lint"
DEBOUNCE_SECONDS = 0.3
SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
            Severity.NOTE: types.DiagnosticSeverity.Information}


def _utf16(line_text: str, column: int) -> int:
    """A 1-based column in characters as LSP's 0-based UTF-16 offset (the protocol's default)."""
    prefix = line_text[: max(column - 1, 0)]
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def _range(lines: list[str], line: int, column: int, end_line: int | None, end_column: int | None) -> types.Range:
    def text(number: int) -> str:
        return lines[number - 1] if 0 < number <= len(lines) else ""

    end_line = end_line or line
    start = types.Position(line=max(line - 1, 0), character=_utf16(text(line), column))
    # No end column: to the end of that line (the node is a block, or a missing field's parent).
    end_char = _utf16(text(end_line), end_column) if end_column else _utf16(text(end_line), len(text(end_line)) + 1)
    end = types.Position(line=max(end_line - 1, 0), character=end_char)
    return types.Range(start=start, end=end if (end.line, end.character) >= (start.line, start.character) else start)


def finding_diagnostic(finding: Finding, lines: list[str], linted: Linted) -> types.Diagnostic:
    loc = finding.location
    policy = linted.policies.get(finding.rule_id)
    url = docs_url(policy) if policy is not None else None
    zero = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    related = [types.DiagnosticRelatedInformation(
        location=types.Location(uri=incident.urls[0], range=zero), message=f"evidence: {incident.title}")
        for incident in (linted.incidents.get(e) for e in finding.evidence) if incident is not None and incident.urls]
    subject = f"{finding.resource.display()}: " if finding.resource else ""
    return types.Diagnostic(
        range=_range(lines, loc.line, loc.column, loc.end_line, loc.end_column),
        message=f"{finding.rule_name}: {subject}{finding.message}",
        severity=SEVERITY[finding.severity], code=finding.rule_id, source=SOURCE,
        code_description=types.CodeDescription(href=url) if url else None,
        related_information=related or None,
        data=finding_data(finding),  # a code action's way back to the finding and its fix
    )


def error_diagnostic(error: InputError, lines: list[str]) -> types.Diagnostic:
    line = error.line or 1
    return types.Diagnostic(range=_range(lines, line, error.column or 1, line, None),
                            message=f"not linted: {error.message}", severity=types.DiagnosticSeverity.Error,
                            code="input-error", source=SOURCE)


class KubegapLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.linter = DocumentLinter()
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.snapshots: dict[str, Snapshot] = {}  # each document as last published: its code actions
        # One lint at a time, off the event loop: the server keeps reading messages meanwhile.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubegap-lint")

    def diagnostics(self, uri: str) -> tuple[Snapshot, list[types.Diagnostic]] | None:
        document = self.workspace.get_text_document(uri)
        path = to_fs_path(uri)
        snapshot = Snapshot(uri, document.version, document.source, [], {})
        if path is None or not holds_manifests(path, document.source):
            return snapshot, []
        lines = document.source.splitlines()
        try:
            linted = self.linter.lint(path, document.source)
        except Exception as exc:  # noqa: BLE001 - a bug met by one document: said on it, the server goes on
            error = InputError(path, f"internal error: {type(exc).__name__}: {exc} (please report this with the"
                                     " file that caused it)", 1, 1)
            return snapshot, [error_diagnostic(error, lines)]
        found = [finding_diagnostic(f, lines, linted) for f in linted.findings]
        found += [error_diagnostic(e, lines) for e in linted.errors]
        snapshot.findings, snapshot.params = linted.findings, linted.params
        return snapshot, found

    async def publish(self, uri: str, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self.executor, self.diagnostics, uri)
        if outcome is None:
            return
        snapshot, found = outcome
        current = self.workspace.get_text_document(uri).version
        if snapshot.version != current:  # changed while it was linted: the next lint will say
            return
        self.snapshots[uri] = snapshot
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=snapshot.version, diagnostics=found))

    def schedule(self, uri: str, delay: float) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.ensure_future(self.publish(uri, delay))
        self.pending[uri] = task
        task.add_done_callback(lambda done: self.pending.pop(uri, None) if self.pending.get(uri) is done else None)


def build() -> KubegapLanguageServer:
    server = KubegapLanguageServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: KubegapLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: KubegapLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: KubegapLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: KubegapLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.snapshots.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    if fixes.available():  # the autofix (issue 32): quick fix a finding, fix-all a file
        @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
        def actions(ls: KubegapLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
            uri = params.text_document.uri
            snapshot = ls.snapshots.get(uri)
            document = ls.workspace.get_text_document(uri)
            if snapshot is None or snapshot.version != document.version:
                return []  # not linted as it is now: the lint after the pause offers the actions
            return code_actions(snapshot, params)

    return server


def serve() -> None:
    build().start_io()
