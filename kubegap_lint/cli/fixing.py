"""`lint --fix`, `--diff`, `--unsafe-fixes` and `--show-fixes` (issue 32, docs/autofix.md).

The lint runs as usual; its findings' fixes are computed on the files' texts (fix/), then:
`--diff` prints them as a unified diff and writes nothing (exit 1 when there is one);
`--fix` writes each named file that changes (atomically) and lints again, so the report and
the exit code are those of what is left, as ruff does. `--fix -` reads stdin and writes the
fixed stream to stdout, the findings left to stderr. Only the files the command line names
(or a walk of its folders finds) are written: never a rendered stream, never a chart's template;
a chart's values file only when named, or its values.yaml when the chart is (fix/helm.py).
"""

from __future__ import annotations

import io
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import click

from kubegap_lint.cli.common import fail, write


class FixChoices:
    def __init__(self, fix: bool = False, diff: bool = False, unsafe: bool = False, show: bool = False) -> None:
        self.fix = fix
        self.diff = diff
        self.unsafe = unsafe
        self.show = show

    @property
    def active(self) -> bool:
        return self.fix or self.diff or self.unsafe or self.show


def fix_options(command: Any) -> Any:
    """--fix, --unsafe-fixes, --diff, --show-fixes: given to the command as `fixing: FixChoices`."""
    import functools

    @functools.wraps(command)
    def packed(*args: Any, fix: bool, unsafe_fixes: bool, diff: bool, show_fixes: bool, **kwargs: Any) -> Any:
        return command(*args, fixing=FixChoices(fix, diff, unsafe_fixes, show_fixes), **kwargs)

    for decorator in reversed([
        click.option("--fix", is_flag=True, help="Apply the safe fixes to the named files (- : stdin to stdout),"
                     " then report what is left (docs/autofix.md)."),
        click.option("--unsafe-fixes", is_flag=True, help="Also apply the fixes that choose a value for you."),
        click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing"
                     " (exit 1 when there is a diff)."),
        click.option("--show-fixes", is_flag=True, help="Give each finding's fix in the JSON and SARIF reports."),
    ]):
        packed = decorator(packed)
    return packed


def capture_stdin(paths: tuple[str, ...], fixing: FixChoices) -> bytes | None:
    """Piped input read once, so that it can be linted, fixed and linted again."""
    if not fixing.active or "-" not in paths:  # --show-fixes too: the fixes are computed on its text
        return None
    if fixing.fix and len(paths) > 1:
        fail("--fix - takes no other path: the fixed stream goes to standard output")
    data = sys.stdin.buffer.read() if sys.stdin is not None else b""
    feed_stdin(data)
    return data


def feed_stdin(data: bytes) -> None:
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")


def editable_files(paths: tuple[str, ...], settings: Any, stdin_name: str | None) -> dict[str, str | None]:
    """The display path of each file the command line names or its folders hold (None: stdin),
    but a chart's files and a kustomization's: those are rendered, never edited."""
    from kubegap_lint.helm.render import split_chart_sources
    from kubegap_lint.input.sources import discover
    from kubegap_lint.kustomize.inputs import split_kustomizations

    sources, _ = discover([p for p in paths if p != "-"], settings.exclude, stdin_name,
                          follow_outside=settings.follow_symlinks_out)
    plain, _ = split_kustomizations(paths, sources)
    plain, _ = split_chart_sources(plain)
    out: dict[str, str | None] = {s.display: s.fs_path for s in plain if s.fs_path is not None}
    if "-" in paths:
        from kubegap_lint.input.sources import STDIN_DISPLAY, _display

        out[_display(stdin_name) if stdin_name else STDIN_DISPLAY] = None
    return out


def _reader(files: dict[str, str | None], stdin: bytes | None) -> Callable[[str], str | None]:
    from kubegap_lint.fix.files import decode

    def text_of(path: str) -> str | None:
        if path not in files:
            return None
        fs_path = files[path]
        if fs_path is None:
            return decode(stdin) if stdin is not None else None
        try:
            with open(fs_path, "rb") as handle:
                return decode(handle.read())
        except OSError:
            return None

    return text_of


def _summary(planned: list[Any], verb: str, unsafe: bool) -> str:
    from kubegap_lint.fix.apply import wanted

    applied = Counter(fix.rule_id for file in planned for fix in file.applied)
    files = sum(1 for file in planned if file.changed)
    more = sum(1 for file in planned for fix in file.fixes.values()
               if fix.applies and not wanted(fix, unsafe) and fix not in file.applied)
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(applied.items()))
    text = f"{verb} {sum(applied.values())} finding(s) in {files} file(s)" + (f" ({rules})" if rules else "")
    text += f"; {more} more with --unsafe-fixes" if more else ""
    # A file with an input fault is never edited (fix/compute.py): say so, or "0 fixed" reads as done.
    faulty = sorted(file.path for file in planned if file.faulty)
    if faulty:
        text += (f"; {len(faulty)} file(s) not edited until their YAML error or other input fault"
                 f" (KG001-KG007) is fixed: {', '.join(faulty[:3])}{', ...' if len(faulty) > 3 else ''}")
    return text


def run(paths: tuple[str, ...], fixing: FixChoices, stdin: bytes | None, stdin_name: str | None,
        lint: Callable[[], tuple[Any, Any]], result: Any, linter: Any,
        values_files: tuple[str, ...] = ()) -> tuple[Any, Any, Any]:
    """Fix or diff after the first lint; the result and linter to report, and the fix lookup.
    `values_files` (`helm -f`) may be written with a chart's fixes (fix/helm.py)."""
    from kubegap_lint.fix.apply import unified_diff, write_atomic
    from kubegap_lint.fix.files import FixLookup, plan

    files = editable_files(paths, linter.settings, stdin_name)

    def plan_all(result: Any, linter: Any) -> list[Any]:
        from kubegap_lint.fix.helm import chart_plan, may_write, on_chart

        findings = list(result.iter_findings())
        charts = chart_plan(findings, linter.template_places, linter.params, fixing.unsafe)
        files.update({c.path: c.path for c in charts if c.text and may_write(c.path, (*paths, *values_files))})
        plain = [f for f in findings if not on_chart(f, linter.template_places)]  # a chart's are fixed above
        return plan(plain, _reader(files, stdin), linter.params, fixing.unsafe) + charts

    planned = plan_all(result, linter)
    if fixing.diff:
        write("".join(unified_diff(f.text, f.fixed, f.path) for f in planned if f.changed), None)
        click.echo(f"kubegap-lint: {_summary(planned, 'would fix', fixing.unsafe)}", err=True)
        sys.exit(1 if any(f.changed for f in planned) else 0)
    if fixing.fix:
        for file in planned:
            if file.changed and files.get(file.path) is not None:
                try:
                    write_atomic(str(files[file.path]), file.fixed.encode("utf-8"))
                except OSError as exc:
                    fail(f"cannot write {file.path}: {exc.strerror or exc}")
            elif file.changed:
                stdin = file.fixed.encode("utf-8")
        click.echo(f"kubegap-lint: {_summary(planned, 'fixed', fixing.unsafe)}", err=True)
        if stdin is not None:
            feed_stdin(stdin)
        if any(file.changed for file in planned):  # what is left, linted again
            result, linter = lint()
            planned = plan_all(result, linter)
    return result, linter, FixLookup(planned)


def stdin_out(stdin: bytes | None, result: Any, linter: Any) -> None:
    """`--fix -`: the fixed stream to stdout, the findings left (text) to stderr; then exit."""
    from kubegap_lint.report.formats import ReportOptions, render

    data = stdin or b""
    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    if out is not None:
        out.write(data)
        out.flush()
    else:
        sys.stdout.write(data.decode("utf-8", "replace"))
    for piece in render("text", result, ReportOptions(params=linter.params, estimates=False)).pieces:
        click.echo(piece, err=True, nl=False)
    sys.exit(result.exit_code(linter.settings.fail_on))


def fixed_stdin() -> bytes:
    """What stdin holds now (after --fix, the fixed stream)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if isinstance(buffer, io.BytesIO):
        return buffer.getvalue()
    return b""


__all__ = ["FixChoices", "capture_stdin", "fix_options", "fixed_stdin", "run", "stdin_out"]
