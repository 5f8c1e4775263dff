"""What building views needs for a whole run, in one object: the input index, the parameters,
the kind table, which facts the active rules read, and the caches a stream fills (resource names
against the patterns, command lines read). Made once per run (engine/run.py); everything that
belongs to one workload is made and dropped by workload_view itself.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.workloads.commandline import (
    Command,
    env_text,
    launchers,
    may_name_backend,
    remember,
    script_env,
    torch_backend,
    words_of,
)
from kubegap_lint.workloads.index import InputIndex
from kubegap_lint.workloads.kinds import KindTable


@dataclass(slots=True, kw_only=True)
class ViewContext:
    index: InputIndex
    gpu_patterns: tuple[str, ...] = ()
    nccl_patterns: tuple[str, ...] = ()
    device_class_patterns: tuple[str, ...] = ()  # DRA device classes whose devices are GPUs
    kind_table: KindTable | None = None  # reads resources embedded in others (Katib trialSpec)
    diagnostic_programs: tuple[str, ...] = ()  # one tuple a run: diagnostic._matches keeps it
    # The keys the active rules name (engine/evaluate.view_needs): a costly fact no rule names is
    # not made; None makes every one (a user's policy, or views kept for the caller).
    needs: frozenset[str] | None = None
    # applies(view, fact): does a rule that reads `fact` apply to the view (engine/guards.py)?
    # With it (only with `needs`), the facts that can wait are made after the rest of the view.
    applies: Callable[[Any, str], bool] | None = None
    # Bounded caches, per run: a stream repeats its resource names and command lines.
    gpu_names: dict[str, bool] = field(default_factory=dict)
    nccl_names: dict[str, bool] = field(default_factory=dict)
    commands: dict[str, Command] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.needs is None:
            self.applies = None

    @property
    def all_words(self) -> bool:
        """Every container's `words` (else only where a word may name a backend)."""
        return self.needs is None or "words" in self.needs

    def is_gpu_resource(self, name: str) -> bool:
        found = self.gpu_names.get(name)
        if found is None:
            found = remember(self.gpu_names, name, any(fnmatch.fnmatchcase(name, p) for p in self.gpu_patterns))
        return found

    def is_gpu_device_class(self, name: str) -> bool:
        lowered = name.lower()
        return any(fnmatch.fnmatchcase(lowered, p) for p in self.device_class_patterns)

    def is_nccl_resource(self, name: str) -> bool:
        found = self.nccl_names.get(name)
        if found is None:
            found = remember(self.nccl_names, name, any(fnmatch.fnmatchcase(name, p) for p in self.nccl_patterns))
        return found

    def command(self, text: str) -> Command:
        """What a command line tells, read once per distinct line: the variables it sets, its
        launchers, its words (None when no rule reads them and no word can name a backend) and
        the backend it chooses (torch_backend)."""
        known = self.commands.get(text)
        if known is None:
            sets = tuple((name, env_text(value)) for name, value in script_env(text).items())
            names = launchers(text)
            backend_words = bool(text) and may_name_backend(text)
            words = (tuple(words_of(text)) if text else ()) if self.all_words or backend_words else None
            known = (sets, names, words, torch_backend(list(words)) if backend_words and words else None)
            if len(text) <= 4096:
                remember(self.commands, text, known)
        return known
