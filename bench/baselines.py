"""The baselines the benchmark measures the lint against, each run as its own process.

    python bench/baselines.py cparser FILE...   # ruamel.yaml.clib's CParser composing every document
    python bench/baselines.py json FILE.jsonl   # json.loads of every line
    python bench/baselines.py imports           # the bare import line start-up is compared with

`cparser` drives the C parser directly, as `kubegap_lint/input/parse.py` does, with ruamel's
`Resolver` mixed in and ruamel's own node classes: what "compose_all with the C parser" costs.
"""

from __future__ import annotations

import sys


def compose_all(paths: list[str]) -> int:
    import _ruamel_yaml
    from ruamel.yaml.resolver import Resolver

    class Composer(_ruamel_yaml.CParser, Resolver):  # type: ignore[misc, name-defined]
        def __init__(self, stream: bytes) -> None:
            _ruamel_yaml.CParser.__init__(self, stream)
            Resolver.__init__(self)

    documents = 0
    for path in paths:
        with open(path, "rb") as handle:
            parser = Composer(handle.read())
        try:
            while parser.check_node():
                parser.get_node()
                documents += 1
        except Exception:  # a broken document ends that file, as it would for compose_all
            continue
    return documents


def json_lines(path: str) -> int:
    import json

    documents = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
            documents += 1
    return documents


def main() -> None:
    mode, paths = sys.argv[1], sys.argv[2:]
    if mode == "cparser":
        print(compose_all(paths))
    elif mode == "json":
        print(json_lines(paths[0]))
    elif mode == "imports":
        import click  # noqa: F401
        import jmespath  # noqa: F401
        import ruamel.yaml  # noqa: F401
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
