"""The custom JMESPath functions policies may call. Kept few; each one's docstring is its row of
the table in docs/writing-policies.md (catalog/docs.py, scripts/regenerate.py). They are pure: no I/O, no code from the policy is ever run."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jmespath.functions
from jmespath.exceptions import JMESPathError

from kubegap_lint.core.quantity import parse_quantity

# Regular expressions come from policy files and run on RE2 (patterns.py); subjects are
# bounded too, so one call's work is bounded whatever the engine.
MAX_MATCH_SUBJECT = 4096

# The words of a path (path_names_any): runs of letters, split where a lower-case letter meets an
# upper-case one (`modelCheckpoints`: model, Checkpoints; `CKPT`: CKPT).
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_SCRIPT_SUFFIXES = (".py", ".sh", ".bash")

# How many list arguments a run's functions keep prepared (see PolicyFunctions._strings).
_KEPT_LISTS = 256


def _compiled(pattern: str) -> Any:
    from kubegap_lint.catalog.patterns import PatternError, compile_pattern

    # Patterns known when a policy loads are checked then; this catches computed ones.
    try:
        return compile_pattern(pattern)
    except PatternError as exc:
        raise JMESPathError(str(exc)) from None


class PolicyFunctions(jmespath.functions.Functions):
    """JMESPath functions bound to one run's parameters."""

    def __init__(self, params: dict[str, Any]) -> None:
        super().__init__()
        self.params = params
        self._known_tables: dict[int, tuple[list[Any], frozenset[str], tuple[str, ...]]] = {}
        # The string entries of a list argument, lowered or not, by the list's id (the list is
        # kept, so its id stays its own): parameters and literal lists are the same object on
        # every call. A bounded number, for lists computed from the data.
        self._strings: dict[int, tuple[list[Any], tuple[str, ...]]] = {}
        self._lowered: dict[int, tuple[list[Any], tuple[str, ...]]] = {}
        self._matchers: dict[str, Any] = {}  # match()'s compiled patterns, by pattern

    def caller(self, name: str) -> tuple[Callable[..., Any], Callable[[list[Any]], bool]]:
        """(the function `name` bound to this run, check): how compile.py calls a function.
        FUNCTION_TABLE (jmespath's registry of the `_func_` methods, jmespath's own included)
        is the one list of names. `check(arguments)` is jmespath's own check of the arguments,
        raising jmespath's errors (an unknown name first); it returns whether the types of the
        arguments were all it read (a signature without variadic or item-typed arrays), so
        that the caller may remember the types it accepted."""
        spec = self.FUNCTION_TABLE.get(name)
        if spec is None:
            def unknown(arguments: list[Any]) -> bool:
                self.call_function(name, arguments)  # raises UnknownFunctionError
                return False

            return (lambda *arguments: None), unknown
        signature = spec["signature"]
        plain = not any(a.get("variadic") or any("-" in t for t in a.get("types") or ()) for a in signature)

        def check(arguments: list[Any]) -> bool:
            self._validate_arguments(arguments, signature, name)
            return plain

        return spec["function"].__get__(self), check

    @jmespath.functions.signature({"types": ["string"]})
    def _func_param(self, name: str) -> Any:
        """a rule parameter (`policies/params.yaml`, overridden by the configuration's `params:`)"""
        if name not in self.params:
            raise JMESPathError(f"unknown parameter '{name}'")
        return self.params[name]

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["string", "null"]})
    def _func_match(self, pattern: str, subject: str | None) -> bool:
        """whether the regular expression `pattern` matches somewhere in `subject` (null: false);
        RE2 syntax, linear time (a backreference or lookaround runs on Python's `re` and fails after
        0.5 s)"""
        if subject is None:
            return False
        matcher = self._matchers.get(pattern)
        if matcher is None:
            matcher = _compiled(pattern)
            if len(self._matchers) < 512:  # computed patterns: a bounded number kept
                self._matchers[pattern] = matcher
        try:
            return bool(matcher.search(subject[:MAX_MATCH_SUBJECT]))
        except Exception as exc:
            from kubegap_lint.catalog.patterns import PatternError

            if isinstance(exc, PatternError):
                raise JMESPathError(str(exc)) from None
            raise

    # Any type: policies pass manifest values (an emptyDir's sizeLimit, the memory limit KubeRay
    # sizes its /dev/shm by), and a list or mapping there is no quantity, not a failed policy.
    @jmespath.functions.signature({"types": []})
    def _func_quantity(self, value: Any) -> float | None:
        """a Kubernetes quantity (`8Gi`, `500m`) as a number; null for anything else"""
        return parse_quantity(value)

    @jmespath.functions.signature({"types": ["string", "null"]}, {"types": ["array"]})
    def _func_contains_any(self, subject: str | None, needles: list[Any]) -> bool:
        """whether `subject` contains any needle, ignoring case"""
        if not subject:
            return False
        found = self._lowered.get(id(needles))
        if found is None or found[0] is not needles:
            found = (needles, tuple(needle.lower() for needle in needles if isinstance(needle, str)))
            if len(self._lowered) < _KEPT_LISTS:
                self._lowered[id(needles)] = found
        lowered = subject.lower()
        for needle in found[1]:  # noqa: SIM110 - a loop, not any(generator): called for every pod
            if needle in lowered:
                return True
        return False

    @jmespath.functions.signature({"types": ["string", "null"]}, {"types": ["array"]})
    def _func_path_names_any(self, path: str | None, words: list[Any]) -> bool:
        """whether a folder or file name of `path` holds one of `words` (or its plural in `s`)
        as a word of its own, ignoring case: names split at every character but a letter and
        where a lower-case letter meets an upper-case one (`/ckpt_dir`, `/data/modelCheckpoints`
        match `ckpt`, `checkpoint`; `train_checkpointless.py` does not); the name of a script
        (`.py`, `.sh`) the path runs is not read"""
        if not path:
            return False
        found = self._lowered.get(id(words))
        if found is None or found[0] is not words:
            found = (words, tuple(word.lower() for word in words if isinstance(word, str)))
            if len(self._lowered) < _KEPT_LISTS:
                self._lowered[id(words)] = found
        if path.endswith(_SCRIPT_SUFFIXES):
            path = path[:path.rfind("/") + 1]
        lowered = path.lower()
        if not any(word in lowered for word in found[1]):  # most paths: no word there at all
            return False
        for word in _WORD_RE.findall(path[:MAX_MATCH_SUBJECT]):
            word = word.lower()
            if word in found[1] or (word[-1:] == "s" and word[:-1] in found[1]):
                return True
        return False

    @jmespath.functions.signature({"types": ["string", "null"]}, {"types": ["array"]})
    def _func_starts_with_any(self, subject: str | None, prefixes: list[Any]) -> bool:
        """whether `subject` starts with any prefix"""
        if not subject:
            return False
        found = self._strings.get(id(prefixes))
        if found is None or found[0] is not prefixes:
            found = (prefixes, tuple(prefix for prefix in prefixes if isinstance(prefix, str)))
            if len(self._strings) < _KEPT_LISTS:
                self._strings[id(prefixes)] = found
        return subject.startswith(found[1])

    @jmespath.functions.signature({"types": ["array"]}, {"types": ["string", "null"]})
    def _func_covering_mount(self, mounts: list[Any], path: str | None) -> Any:
        """the mount whose path is the longest directory prefix of `path`"""
        if not path:
            return None
        best = None
        best_len = -1
        for mount in mounts:
            mount_path = mount.get("path") if isinstance(mount, dict) else None
            if not isinstance(mount_path, str) or not mount_path:
                continue
            root = mount_path.rstrip("/") or "/"
            if path == root or path.startswith(root + "/") or root == "/":
                if len(root) > best_len:
                    best, best_len = mount, len(root)
        return best

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["array"]})
    def _func_closest(self, name: str, candidates: list[Any]) -> str | None:
        """the most similar of the `candidates` to `name`, for did-you-mean messages, or null"""
        words = [c for c in candidates if isinstance(c, str)]
        import difflib  # only for did-you-mean messages

        found = difflib.get_close_matches(name, words, n=1, cutoff=0.75)
        return found[0] if found else None

    @jmespath.functions.signature({"types": ["object", "null"]}, {"types": ["string"]})
    def _func_has(self, mapping: dict[str, Any] | None, key: str) -> bool:
        """whether the key is present, even with a null value (set, value unknown)"""
        return isinstance(mapping, dict) and key in mapping

    @jmespath.functions.signature({"types": ["object"]})
    def _func_items(self, mapping: dict[str, Any]) -> list[dict[str, Any]]:
        """the object as `[{key, value}]` pairs, in key order"""
        return [{"key": k, "value": mapping[k]} for k in sorted(mapping)]

    @jmespath.functions.signature({"types": []})  # any type: policies pass the manifest's probe
    def _func_probe_window(self, probe: Any) -> int | None:
        """the seconds a startup or liveness probe lets a starting container live before the
        kubelet kills it: `initialDelaySeconds + failureThreshold x periodSeconds`, with
        Kubernetes' defaults (0, 3, 10); null without a probe, for a probe that is no mapping or
        when a field is not a whole number (unrendered)"""
        if not isinstance(probe, dict) or not probe:
            return None
        fields = []
        for key, default in (("initialDelaySeconds", 0), ("failureThreshold", 3), ("periodSeconds", 10)):
            value = probe.get(key, default)
            if value is None:
                value = default
            if isinstance(value, bool) or not isinstance(value, int):
                return None
            fields.append(value)
        delay, failures, period = fields
        return delay + failures * period

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["array"]})
    def _func_known_name(self, name: str, known: list[Any]) -> bool:
        """whether `name` is in the list; an entry ending in `*` is a prefix (a network plugin's
        namespace such as `NCCL_FASTRAK_*`)"""
        # The list is a parameter, the same object on every call: split it once into a set of
        # names and a tuple of prefixes (kept with the list, so its id stays its own).
        table = self._known_tables.get(id(known))
        if table is None or table[0] is not known:
            words = [entry for entry in known if isinstance(entry, str)]
            table = (known, frozenset(words), tuple(w[:-1] for w in words if w.endswith("*")))
            if len(self._known_tables) < _KEPT_LISTS:  # lists computed from the data: a bounded number
                self._known_tables[id(known)] = table
        return name in table[1] or name.startswith(table[2])

    @jmespath.functions.signature({"types": ["object", "null"]}, {"types": ["string", "null"]})
    def _func_lookup(self, mapping: dict[str, Any] | None, key: str | None) -> Any:
        """`mapping[key]` for a key computed from the data, such as a hint for an env name (JMESPath
        has no dynamic keys)"""
        if not isinstance(mapping, dict) or key is None:
            return None
        return mapping.get(key)


class PolicyInterpreter:
    """Evaluates policy expressions for one run: each expression is compiled into closures
    (compile.py) the first time it is searched and kept for the run. Every search has its own
    value budget (budget.Budget)."""

    def __init__(self, params: dict[str, Any]) -> None:
        from kubegap_lint.catalog.budget import Budget
        from kubegap_lint.catalog.compile import Compiler

        self._functions = PolicyFunctions(params)
        self.budget = Budget()
        self.compiler = Compiler(self._functions, self.budget)
        # id(expression) -> (expression, evaluator); the expression is kept so its id stays its own.
        self._evaluators: dict[int, tuple[Any, Any]] = {}
        self._tracking: Any = None

    @property
    def tracking(self) -> Any:
        """The compiler's tracking variant (catalog/tracked.py), made when a finding is first
        located: what engine/locate.py evaluates an `at:` expression with."""
        if self._tracking is None:
            from kubegap_lint.catalog.tracked import Tracking

            self._tracking = Tracking(self.compiler)
        return self._tracking

    def evaluator(self, expression: Any) -> Any:
        """A callable value -> result for a compiled expression (jmespath.compile's result)."""
        found = self._evaluators.get(id(expression))
        if found is not None and found[0] is expression:
            return found[1]
        evaluate = self.compiler.compile(expression.parsed)
        budget = self.budget

        def search(value: Any) -> Any:
            budget.produced = 0  # each search has its own budget
            return evaluate(value)

        self._evaluators[id(expression)] = (expression, search)
        return search

    def plain_evaluator(self, parsed: dict[str, Any]) -> Any:
        """The closures of a parsed tree, without a budget reset: the caller sets
        `budget.produced = 0` before each search it makes with it (engine/evaluate.Plan)."""
        return self.compiler.compile(parsed)

    def search(self, expression: Any, value: Any) -> Any:
        """What `expression.search(value, options)` gives, for a compiled expression; a
        JMESPathError when it builds more than MAX_VALUES values (see budget.Budget)."""
        found = self._evaluators.get(id(expression))
        if found is not None and found[0] is expression:
            return found[1](value)
        return self.evaluator(expression)(value)
