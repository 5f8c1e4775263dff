"""The language server's code actions, from the autofix (serve/fixes.py): a quick fix for each
diagnostic whose finding has a fix with edits (an unsafe one says so in its title, and is never
preferred), and one "fix all safe" source action for the file.

The actions are built on the text that was linted (a `Snapshot`), and their edits name that
text's version: a client whose document changed since refuses them, and the next lint offers new
ones. A diagnostic is mapped back to its finding by its `data` (rule, line, column, key path).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from kubegap_lint.core.model import Finding
from kubegap_lint.fix.model import SAFE, Fix, LineMap
from kubegap_lint.serve import fixes

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.kubegap-lint"


def finding_data(finding: Finding) -> dict[str, Any]:
    """A diagnostic's `data`: what finds its finding again, and the node a fix edits."""
    loc = finding.location
    return {"rule": finding.rule_id, "line": loc.line, "column": loc.column, "key_path": list(finding.key_path),
            "document": finding.document_index, "missing": finding.missing}


def _identity(rule: Any, line: Any, column: Any, key_path: Any) -> tuple[str, int, int, tuple[str, ...]]:
    return str(rule), int(line), int(column), tuple(str(part) for part in key_path or ())


class Snapshot:
    """A document as it was linted: its version, text and findings; their fixes computed on the
    first code-action request (typing does not pay for them)."""

    def __init__(self, uri: str, version: int | None, text: str, findings: list[Finding],
                 params: dict[str, Any]) -> None:
        self.uri, self.version, self.text = uri, version, text
        self.findings, self.params = findings, params
        self._fixes: list[tuple[Finding, Fix]] | None = None

    def fixes(self) -> list[tuple[Finding, Fix]]:
        if self._fixes is None:
            self._fixes = fixes.document_fixes(self.text, self.findings, self.params) if self.findings else []
        return self._fixes

    def fix_of(self, diagnostic: types.Diagnostic) -> tuple[Finding, Fix] | None:
        data = diagnostic.data
        if diagnostic.source != "kubegap-lint" or not isinstance(data, dict):
            return None
        try:
            wanted = _identity(data["rule"], data["line"], data["column"], data.get("key_path"))
        except (KeyError, TypeError, ValueError):
            return None
        for finding, fix in self.fixes():
            loc = finding.location
            if _identity(finding.rule_id, loc.line, loc.column, finding.key_path) == wanted:
                return finding, fix
        return None

    def edit(self, after: str) -> types.WorkspaceEdit:
        """The edit that makes `after` of the text, on this version of the document."""
        lines = LineMap(self.text)
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(range=types.Range(start=self._position(lines, start), end=self._position(lines, end)),
                           new_text=new) for start, end, new in fixes.text_changes(self.text, after)]
        document = types.OptionalVersionedTextDocumentIdentifier(uri=self.uri, version=self.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])

    def _position(self, lines: LineMap, offset: int) -> types.Position:
        """A character offset as LSP's position: 0-based line, UTF-16 code units."""
        line, column = lines.position(offset)
        prefix = self.text[lines.starts[line - 1]:lines.starts[line - 1] + column - 1]
        return types.Position(line=line - 1, character=len(prefix.encode("utf-16-le", "surrogatepass")) // 2)


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a request's `only` kinds take an action of `kind` (a kind takes its sub-kinds)."""
    return only is None or any(kind == base or kind.startswith(base + ".") for base in only)


def code_actions(snapshot: Snapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = [str(kind) for kind in params.context.only] if params.context.only is not None else None
    actions: list[types.CodeAction] = []
    if _wants(only, types.CodeActionKind.QuickFix.value):
        for diagnostic in params.context.diagnostics:
            found = snapshot.fix_of(diagnostic)
            if found is None or not found[1].applies:
                continue
            finding, fix = found
            safe = fix.applicability == SAFE
            actions.append(types.CodeAction(
                title=f"{finding.rule_id}: {fix.description}" + ("" if safe else " (unsafe: review the value)"),
                kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=safe,
                edit=snapshot.edit(fixes.fix_one(snapshot.text, fix))))
    if _wants(only, FIX_ALL):
        fixed = fixes.fix_all(snapshot.text, [fix for _, fix in snapshot.fixes()])
        if fixed != snapshot.text:
            actions.append(types.CodeAction(title="kubegap-lint: fix all safe fixes in the file",
                                            kind=FIX_ALL, edit=snapshot.edit(fixed)))
    return actions
