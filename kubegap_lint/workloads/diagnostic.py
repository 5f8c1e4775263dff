"""Is a container only a diagnostic, or idle? (The `diagnostic` class, docs/workload-view.md.)

A GPU smoke test (`nvidia-smi -L`, `sleep infinity`, a CUDA sample, an nccl-tests run) is not
training: nothing it computes needs a checkpoint or a restart budget. A container is diagnostic
when every command its command line runs is one of the programs of the `diagnostic_commands`
parameter (globs on the program's file name), shell glue around them (echo, export, a `while`
loop), or an idle `tail -f /dev/null`. Anything else (torchrun, python, accelerate, deepspeed,
`mpirun python train.py`, a script file, or a container with no command, whose entrypoint the
manifest does not show) keeps the pod what its kind says.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence

_SHELLS = frozenset(("sh", "bash", "dash", "ash", "zsh", "ksh"))
# Words that only hold a script together; they change nothing a checkpoint would keep.
_GLUE = frozenset(("echo", "printf", "true", "false", ":", "set", "export", "exit", "date", "trap",
                   "hostname", "wait", "ls", "env", "sync", "grep", "head"))
# An MPI worker only runs an SSH daemon for the launcher: it is what the launcher runs.
_FOLLOWERS = frozenset(("sshd",))
# `service ssh start` starts that daemon from a script; it runs nothing of its own either
# (cluster-toolkit's NCCL sample pods: `service ssh restart; sleep infinity`).
_SSH_SERVICES = frozenset(("ssh", "sshd"))
# Keywords and prefixes before the program of a shell command.
_PREFIX = frozenset(("while", "until", "do", "done", "then", "else", "fi", "if", "!", "{", "}",
                     "exec", "time", "nohup", "command"))
# Launchers that run another program: the program they run decides.
_WRAPPERS = frozenset(("mpirun", "mpiexec", "orterun", "srun", "timeout", "numactl", "taskset",
                       "stdbuf", "nice", "ionice", "chrt"))
_WORK = ("python*", "torchrun", "accelerate", "deepspeed", "*.py", "*.sh", "java", "node")
_UNSET: re.Pattern[str] = re.compile("")  # not in _UNIONS yet
# Commands end at a new line, `;`, `&&`, `||`, `|` or `&`: a script is split into lines, then
# a line into commands only where it holds one of the others (split as far as it is read).
_SEPARATORS = re.compile(r";|&&|\|\||\||&")
_CONTINUED = re.compile(r"\\\r?\n")  # a line that ends in `\` goes on on the next
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _program(word: str) -> str:
    word = word.strip("\"'()")
    return word[word.rfind("/") + 1:]  # posixpath.basename, without its calls (once a command word)


_UNIONS: dict[tuple[str, ...], re.Pattern[str] | None] = {}  # a run has one or two lists of globs


_LAST_UNION: list[tuple[tuple[str, ...], re.Pattern[str] | None]] = [((), None)]  # the last tuple's


def _matches(name: str, patterns: Iterable[str]) -> bool:
    """fnmatchcase against any of the globs, as one regular expression (fnmatch's own)."""
    last = _LAST_UNION[0]
    if patterns is last[0]:  # the same tuple as the last call's (a tuple cannot change)
        union = last[1]
    else:
        key = tuple(patterns)
        union = _UNIONS.get(key, _UNSET)
        if union is _UNSET:
            union = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in key)) if key else None
            if len(_UNIONS) >= 64:
                _UNIONS.clear()
            _UNIONS[key] = union
        if isinstance(patterns, tuple):
            _LAST_UNION[0] = (patterns, union)
    return union is not None and union.match(name) is not None


def _segment_diagnostic(words: list[str], programs: Sequence[str]) -> bool:
    while words and (words[0] in _PREFIX or ("=" in words[0] and _ASSIGNMENT.match(words[0]))):
        words = words[1:]
    if not words:
        return True
    program = _program(words[0])
    if program in _GLUE or (program == "service" and len(words) > 1 and words[1] in _SSH_SERVICES):
        return True
    if program == "tail" and "/dev/null" in words:  # the idle loop of a debug pod
        return True
    if program in _SHELLS and "-c" not in words:
        return False  # a script file: what it runs is not in the manifest
    if program in _SHELLS:
        script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
        return script_is_diagnostic(script, programs)
    if program in _WRAPPERS:
        payload = [_program(w) for w in words[1:]]
        return (any(_matches(p, programs) for p in payload)
                and not any(_matches(p, _WORK) for p in payload))
    return _matches(program, programs)


def script_is_diagnostic(script: str, programs: Sequence[str]) -> bool:
    """Every command of a shell script is a diagnostic, glue or idle (and there is one)."""
    if "\\" in script:
        script = _CONTINUED.sub(" ", script)
    seen = False
    for line in script.split("\n"):  # split into words only as far as it is read
        if line.lstrip().startswith("#"):
            continue  # a comment line runs nothing
        for segment in _SEPARATORS.split(line) if ";" in line or "&" in line or "|" in line else (line,):
            words = segment.split()
            if words:
                if not _segment_diagnostic(words, programs):
                    return False
                seen = True
    return seen


def image_programs(image: object) -> list[str]:
    """The programs an image's name suggests its entrypoint runs: the repository's last part
    (`.../k8s-staging-perf-tests/sleep:v0.0.3`: sleep) and the tag's first word
    (`cuda-sample:nbody-cuda11.7.1`: nbody; `k8s-samples:nvbandwidth-v0.7`: nvbandwidth)."""
    if not isinstance(image, str) or not image:
        return []
    name = image.split("@", 1)[0]
    repository, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "")
    found = [repository.rsplit("/", 1)[-1]]
    if tag:
        found.append(tag.split("-", 1)[0])
    return [f for f in found if f]


def container_is_diagnostic(command: Sequence[str], args: Sequence[str], image: object,
                            programs: Sequence[str]) -> bool:
    """A container runs only diagnostics or idles. Without `command` the image's entrypoint
    runs: the args decide when they start with a diagnostic program (images without an
    entrypoint, such as ubuntu), else the image's name does."""
    if command:
        return command_is_diagnostic([*command, *args], programs)
    if args and command_is_diagnostic(args, programs):
        return True
    return any(_matches(name, programs) for name in image_programs(image))


def _runs_script(word: str) -> bool:
    """A shell's short option that takes `-c` (`-c`, `-ec`, `-lc`), not a long one."""
    return word[:1] == "-" and word[:2] != "--" and "c" in word.lstrip("-")


def command_is_diagnostic(words: Sequence[str], programs: Sequence[str]) -> bool:
    """A container's command and args (as words) run only diagnostics or idle."""
    if not words:
        return False
    program = _program(words[0])
    if program in _SHELLS:
        # The script follows the first word that is a short option with `c` (the shell's own
        # word too, when it is one), once some word after the shell is one.
        position = next((i for i in range(1, len(words)) if _runs_script(words[i])), 0)
        if position:
            if _runs_script(words[0]):
                position = 0
            if position + 1 < len(words) and words[position + 1] == "--":
                position += 1  # `bash -c -- 'script'`: the end of the options, then the script
            script = words[position + 1] if position + 1 < len(words) else ""
            return script_is_diagnostic(script, programs)
        return False
    return _segment_diagnostic(list(words), programs)


# Per run, bounded: a container's verdict by its command, args, image and the programs; a
# stream repeats its containers' commands pod after pod.
_VERDICTS: dict[tuple[tuple[str, ...], tuple[str, ...], str | None, tuple[str, ...]], bool] = {}
_REMEMBERED = 256


def _words(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    words = tuple(value)
    for word in words:  # nearly always strings: no copy of each
        if type(word) is not str:
            return tuple(str(v) for v in words if v is not None)
    return words


def _container_diagnostic(command: tuple[str, ...], args: tuple[str, ...], image: object,
                          programs: Sequence[str], known: tuple[str, ...]) -> bool:
    # A non-string image names no program (image_programs), as None does.
    key = (command, args, image if isinstance(image, str) else None, known)
    found = _VERDICTS.get(key)
    if found is None:
        found = container_is_diagnostic(command, args, image, known)  # `known`: the tuple _matches keeps
        if sum(map(len, command)) + sum(map(len, args)) <= 4096:  # bounded, whatever the input
            if len(_VERDICTS) >= _REMEMBERED:
                _VERDICTS.clear()
            _VERDICTS[key] = found
    return found


def diagnostic_verdict(containers: list[dict[str, object]], programs: Sequence[str]) -> tuple[bool, bool]:
    """(diagnostic, follows) for a pod's containers: every one runs only diagnostics or idles;
    or every one only serves another pod (then the workload's other pods decide)."""
    if not containers:
        return False, False
    commands = [_words(c.get("command")) for c in containers]
    follows = True  # every container only serves another pod (an MPI worker's sshd)
    for command in commands:
        if not command or _program(command[0]) not in _FOLLOWERS:
            follows = False
            break
    if follows:
        return False, True
    known = tuple(programs)  # the same tuple when given one
    diagnostic = all(_container_diagnostic(command, _words(c.get("args")), c.get("image"), programs, known)
                     for command, c in zip(commands, containers, strict=True))
    return diagnostic, follows
