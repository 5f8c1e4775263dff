"""Shell completion, click's own (docs/editors-and-agents.md): the variable the docs name gives
the script and completes subcommands and format names."""

from __future__ import annotations

from conftest import run_cli


def _complete(words: str, cword: int) -> list[str]:
    proc = run_cli(env={"_KUBEGAP_LINT_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().split()


def test_bash_script_and_completions() -> None:
    script = run_cli(env={"_KUBEGAP_LINT_COMPLETE": "bash_source"})
    assert "_kubegap_lint_completion()" in script.stdout.decode()
    assert _complete("kubegap-lint --format g", 2) == ["plain,github", "plain,gitlab"]
    assert _complete("kubegap-lint se", 1) == ["plain,server"]
    assert "plain,mcp" in _complete("kubegap-lint m", 1)
