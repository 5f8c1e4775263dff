"""Rewrite every generated file a test compares byte for byte; run it after adding or changing a
rule, an example, the workload view's types or an output format, then review `git diff`.

    python scripts/regenerate.py          # everything below
    python scripts/regenerate.py sarif    # the SARIF goldens only (scripts/update-sarif-golden.sh)

- docs/rules.md: `kubegap-lint rules --markdown` (tests/test_docs.py)
- docs/workload-view.md: from kubegap_lint/workloads/viewtypes.py and the fact registry
  (kubegap_lint/workloads/facts/), its table of what a policy's `needs:` and `at:` can name
  included (tests/test_viewtypes.py)
- the tables marked `generated` in hand-written pages (tests/test_docs.py): the options of `lint`
  in docs/command-line.md (kubegap_lint/cli/reference.py, from the command's own options) and
  the policy functions in docs/writing-policies.md (catalog/docs.py, from catalog/functions.py)
- tests/golden/sarif/KGnnn-name.sarif: each example folder linted with its own rule only, and
  helm-gpu-train.sarif: the Helm example's rendered output (tests/test_sarif.py, whose
  golden_args says the same commands)

It runs this checkout's code in one process, the command line's own entry for each file, so the
bytes are those `python -m kubegap_lint` prints. A golden holds its folder's rule alone, so a new
rule adds its own golden and changes no other.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GOLDEN = REPO / "tests" / "golden" / "sarif"
HELM_RULES = "KG201,KG303,KG501"  # the Helm example: findings mapped back to the chart's templates


def _cli(*args: str) -> int:
    """Run the command line in this process, as `python -m kubegap_lint ARGS` would."""
    from kubegap_lint.cli.main import cli

    try:
        cli.main(list(args), prog_name="kubegap-lint", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def sarif_goldens() -> list[Path]:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in GOLDEN.glob("*.sarif"):
        old.unlink()
    written = []
    jobs = [(folder.name.split("-")[0], f"examples/{folder.name}", GOLDEN / f"{folder.name}.sarif")
            for folder in sorted((REPO / "examples").glob("KG[0-9][0-9][0-9]-*")) if folder.is_dir()]
    jobs.append((HELM_RULES, "examples/helm/rendered.yaml", GOLDEN / "helm-gpu-train.sarif"))
    for rules, target, golden in jobs:
        status = _cli("lint", "--format", "sarif", "--select", rules, "--sarif-root", ".",
                      "--output", str(golden.relative_to(REPO)), target)
        if status > 1:
            raise SystemExit(f"regenerate: kubegap-lint failed on {target} (exit {status})")
        written.append(golden)
    return written


def generated_tables() -> list[Path]:
    """Rewrite the generated tables inside hand-written pages (_table_sources)."""
    from kubegap_lint.catalog.docs import with_generated_block

    written = []
    for page, name, render in _table_sources():
        path = REPO / page
        _write(path, with_generated_block(path.read_text(encoding="utf-8"), name, render()))
        written.append(path)
    return written


def _table_sources() -> list[tuple[str, str, Callable[[], str]]]:
    """(page, block name, renderer) of each generated table (tests/test_docs.py checks each)."""
    from kubegap_lint.catalog.docs import render_functions_markdown
    from kubegap_lint.cli.reference import render_options_markdown

    return [("docs/command-line.md", "lint options", render_options_markdown),
            ("docs/writing-policies.md", "functions", render_functions_markdown)]


def main(argv: list[str]) -> int:
    import os

    os.chdir(REPO)  # SARIF paths are relative to --sarif-root .
    if argv not in ([], ["sarif"]):
        print(__doc__, file=sys.stderr)
        return 2
    written: list[Path] = []
    if not argv:
        from kubegap_lint.catalog.docs import render_rules_markdown
        from kubegap_lint.catalog.policies import load_catalog
        from kubegap_lint.core.datapaths import examples_dir
        from kubegap_lint.workloads.viewtypes import render_view_markdown

        _write(REPO / "docs" / "rules.md", render_rules_markdown(load_catalog(), examples_dir()))
        _write(REPO / "docs" / "workload-view.md", render_view_markdown())
        written += [REPO / "docs" / "rules.md", REPO / "docs" / "workload-view.md"]
        written += generated_tables()
    written += sarif_goldens()
    print(f"regenerate: wrote {len(written)} files (review with `git diff`)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
