"""The scans over command lines (workloads/commandline.py, facts/) search " " + text with
patterns that start with a character class or a literal (the engine skips to those); each must
find what the plain pattern, with its `^|` alternative, finds in the text itself."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.workloads import commandline
from kubegap_lint.workloads.facts import elastic

# The patterns as they were written before, the reference.
_LAUNCHER = re.compile(
    r"(?:^|[\s/;&|(\"'])(torchrun|torch\.distributed\.run|torch\.distributed\.launch|"
    r"accelerate\s+launch|deepspeed)(?=$|[\s;&|)\"'])")
_EXPORT = re.compile(r"(?:^|[\s;&|(])(?:export\s+)?([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)")
_PATH = re.compile(r"""(?:^|(?<=[\s'"=,(;]))(/(?!/)[^\s'"`;&|<>(),]*)""")
_FLAGS = {name: re.compile(r"(?:^|\s)--" + pattern + r"(?:=|\s+)(\"[^\"]*\"|'[^']*'|[^\s;&|)]+)")
          for name, pattern in (("nnodes", "nnodes"), ("rdzv_backend", r"rdzv[-_]backend"),
                                ("max_restarts", r"max[-_]restarts"))}

# Pieces the patterns care about, and the characters around them.
_PIECES = st.sampled_from([
    " ", "  ", "\n", "\t", ";", "&", "|", "(", ")", "'", '"', "=", ",", "/", "//", ":", ".", "`", "<", "-x",
    "export ", "A", "NCCL_DEBUG", "X1", "a", "b", "torchrun", "torch.distributed.run", "torch.distributed.launch",
    "accelerate", "accelerate launch", "accelerate\n launch", "deepspeed", "deepspeedx", "torchrunx", "\xa0", "--nnodes", "--rdzv-backend", "--rdzv_backend",
    "--max-restarts", "--max_restarts", "1:2", "c10d", "/ckpt", "gs://b/c", "$N",
    "--backend", "--dist-backend", "--dist_backend", "--distributed-backend", "--distributed_", "back", "end", "\\",
])
_TEXTS = st.lists(_PIECES, max_size=14).map("".join)

_SAMPLES = [
    "", "/ckpt", "//x /y", "a/b=/c", "--save=/ckpt,/data", "torchrun x", " torchrun", "(deepspeed)",
    "accelerate  launch", "torchrun", "xtorchrun torchrun", "a/torchrun)", "torchrun/", "X=1 cmd", "export A=1;B='2 3'", "A=B=C", "--nnodes=1:2", "--nnodes 2 --nnodes=3",
    '--nnodes "x --nnodes 3"', "x--nnodes=2", "\t--max_restarts=3", "--rdzv-backend c10d", "a\n--nnodes=1",
]


def _check(text: str) -> None:
    assert commandline.launchers(text) == tuple(sorted({" ".join(m.group(1).split()) for m in _LAUNCHER.finditer(text)}))
    assert [m.groups() for m in commandline._EXPORT_RE.finditer(" " + text)] == [m.groups() for m in _EXPORT.finditer(text)]
    assert [m.group(0) for m in commandline._PATH_RE.finditer(" " + text)] == [m.group(1) for m in _PATH.finditer(text)]
    plain = text.replace("'", "").replace('"', "").replace("\\", "")
    assert commandline.may_name_backend(text) == any(flag in plain for flag in commandline._BACKEND_FLAGS)
    for name, (_, pattern) in elastic._FLAG_RE.items():
        assert pattern.findall(" " + text) == _FLAGS[name].findall(text)


def test_the_scans_find_what_the_plain_patterns_find_on_samples() -> None:
    for text in _SAMPLES:
        _check(text)


@settings(max_examples=600, deadline=None)
@given(_TEXTS)
def test_the_scans_find_what_the_plain_patterns_find(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" \t\n;&|()'\"=,/:.`<>-_xAaN1", max_size=40))
def test_the_scans_agree_on_any_text_of_their_characters(text: str) -> None:
    _check(text)
