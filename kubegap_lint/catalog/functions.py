"""The custom JMESPath functions policies may call. Kept few; each is listed in
docs/writing-policies.md. They are pure: no I/O, no code from the policy is ever run."""

from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any

import jmespath.functions
from jmespath.exceptions import JMESPathError

from kubegap_lint.core.quantity import parse_quantity

# Regular expressions come from policy files and run on RE2 (patterns.py); subjects are
# bounded too, so one call's work is bounded whatever the engine.
MAX_MATCH_SUBJECT = 4096

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

    def constant_form(self, name: str, constant: Any) -> tuple[type, Any] | None:
        """For a call `name(x, constant)` whose second argument is the same value on every call
        (a literal, a parameter, a list of literals): (a type, f) such that f(x) is what the
        function returns for every x of exactly that type, precomputed from the constant and
        mostly a C-level call (no Python frame: compile.py calls it in place of the function,
        after the same argument checks); None when there is none. Kept beside the functions
        it stands for, so the two cannot drift apart unnoticed (tests/test_compile.py)."""
        if type(self).FUNCTION_TABLE.get(name, {}).get("function") is not getattr(PolicyFunctions, "_func_" + name, None):
            return None  # a function this class does not define itself
        if name == "starts_with_any" and isinstance(constant, list):
            prefixes = tuple(prefix for prefix in constant if isinstance(prefix, str))
            if "" in prefixes:
                return None  # '' starts with '', but an empty subject starts with nothing here
            return str, operator.methodcaller("startswith", prefixes)
        if name == "has" and isinstance(constant, str):
            return dict, operator.methodcaller("__contains__", constant)
        if name == "known_name" and isinstance(constant, list):
            words = [entry for entry in constant if isinstance(entry, str)]
            names, prefixes = frozenset(words), tuple(w[:-1] for w in words if w.endswith("*"))
            if not prefixes:
                return str, names.__contains__

            def known(subject: str) -> bool:
                return subject in names or subject.startswith(prefixes)

            return str, known
        return None

    @jmespath.functions.signature({"types": ["string"]})
    def _func_param(self, name: str) -> Any:
        if name not in self.params:
            raise JMESPathError(f"unknown parameter '{name}'")
        return self.params[name]

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["string", "null"]})
    def _func_match(self, pattern: str, subject: str | None) -> bool:
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

    @jmespath.functions.signature({"types": ["string", "number", "null"]})
    def _func_quantity(self, value: Any) -> float | None:
        return parse_quantity(value)

    @jmespath.functions.signature({"types": ["string", "null"]}, {"types": ["array"]})
    def _func_contains_any(self, subject: str | None, needles: list[Any]) -> bool:
        """Case-insensitive: does the subject contain any of the needles?"""
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
    def _func_starts_with_any(self, subject: str | None, prefixes: list[Any]) -> bool:
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
        """The mount whose path is the longest prefix of `path` (a directory or a file prefix)."""
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
        """The most similar candidate (for did-you-mean messages), or null."""
        words = [c for c in candidates if isinstance(c, str)]
        import difflib  # only for did-you-mean messages

        found = difflib.get_close_matches(name, words, n=1, cutoff=0.75)
        return found[0] if found else None

    @jmespath.functions.signature({"types": ["object", "null"]}, {"types": ["string"]})
    def _func_has(self, mapping: dict[str, Any] | None, key: str) -> bool:
        """Is the key present (even with a null value, which means: set, value unknown)?"""
        return isinstance(mapping, dict) and key in mapping

    @jmespath.functions.signature({"types": ["object"]})
    def _func_items(self, mapping: dict[str, Any]) -> list[dict[str, Any]]:
        """An object as [{key, value}] pairs, in key order."""
        return [{"key": k, "value": mapping[k]} for k in sorted(mapping)]

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["array"]})
    def _func_known_name(self, name: str, known: list[Any]) -> bool:
        """Is the name in the list? An entry ending in `*` is a prefix (a plugin's namespace)."""
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
        """mapping[key], for a key computed from the data (JMESPath has no dynamic keys)."""
        if not isinstance(mapping, dict) or key is None:
            return None
        return mapping.get(key)


class PolicyInterpreter:
    """Evaluates compiled policy expressions, with one JMESPath interpreter for a whole run.

    jmespath's `ParsedResult.search` builds a new interpreter on every call, and each is a
    reference cycle (its method cache holds methods bound to itself) that only the cyclic
    garbage collector frees; a run pauses the collector (parallel.collector_paused). Measured
    on bench/stream_memory.py's stream: 40,000 interpreters, 270,000 objects, left behind per
    MB of input. The interpreter keeps no state between calls, so one serves every search.

    Each expression is compiled into closures (compile.py) the first time it is searched and
    kept for the run; `compiled=False` walks the AST with the interpreter instead (the
    reference the differential test compares against).
    """

    def __init__(self, params: dict[str, Any], compiled: bool = True) -> None:
        self._functions = PolicyFunctions(params)
        self._interpreter = _bounded_interpreter_class()(jmespath.Options(custom_functions=self._functions))
        self._visit = self._interpreter.visit
        self._compiled = compiled
        self._compiler: Any = None  # made at the first search: a run without workloads needs none
        # id(expression) -> (expression, evaluator); the expression is kept so its id stays its own.
        self._evaluators: dict[int, tuple[Any, Any]] = {}
        self._nodes: dict[int, tuple[Any, Any]] = {}  # the same for single nodes of a tree
        # search_view's memory: the view (kept alive, so its id is its own) and its results.
        self._view: Any = None
        self._remembered: dict[str, Any] = {}
        self._keys: dict[int, tuple[Any, str]] = {}

    def evaluator(self, expression: Any) -> Any:
        """A callable value -> result for a compiled expression (jmespath.compile's result)."""
        found = self._evaluators.get(id(expression))
        if found is not None and found[0] is expression:
            return found[1]
        evaluate = self.node_evaluator(expression.parsed)
        self._evaluators[id(expression)] = (expression, evaluate)
        return evaluate

    def node_evaluator(self, parsed: dict[str, Any]) -> Any:
        """A callable value -> result for a parsed tree, each call a search of its own (its own
        value budget); engine/evaluate.Plan searches the terms of an applies_to this way."""
        evaluate = self._evaluate(parsed)
        if self._compiled:
            from kubegap_lint.catalog.compile import counts

            if not counts(parsed):  # builds nothing that counts: no budget to reset
                return evaluate
        interpreter = self._interpreter

        def bounded(value: Any) -> Any:
            interpreter.produced = 0  # each search has its own budget of MAX_VALUES
            return evaluate(value)

        return bounded

    def plain_evaluator(self, parsed: dict[str, Any]) -> Any:
        """The callable of `node_evaluator` without its budget reset: the caller sets
        `budget.produced = 0` before each search it makes with it (engine/evaluate.Plan, which
        makes a few dozen searches a view, saves a call each)."""
        return self._evaluate(parsed)

    @property
    def budget(self) -> Any:
        """What counts a search's values (`produced`) against MAX_VALUES."""
        return self._interpreter

    def _evaluate(self, parsed: dict[str, Any]) -> Any:
        if self._compiled:
            if self._compiler is None:
                from kubegap_lint.catalog.compile import Compiler

                self._compiler = Compiler(self._functions, self._interpreter)
            return self._compiler.compile(parsed)
        visit = self._visit

        def evaluate(value: Any) -> Any:
            return visit(parsed, value)

        return evaluate

    def visit(self, node: dict[str, Any], value: Any) -> Any:
        """One node of a parsed expression's tree on a value, compiled as searches are, with the
        same budget (engine/locate.py evaluates the nodes that compute through it)."""
        found = self._nodes.get(id(node))
        if found is None or found[0] is not node:
            found = self._nodes[id(node)] = (node, self._evaluate(node))
        self._interpreter.produced = 0
        return found[1](value)

    def search_view(self, expression: Any, view: Any) -> Any:
        """`search` on a workload view, remembered for that view: rules share their applies_to
        and for_each expressions (`training && has_gpu`, `pods[?nccl_gpu]`), and the run asks
        each rule in turn about the same view. An expression is known by its parsed tree, so
        two rules that write it differently (spacing, folding) share it too."""
        if view is not self._view:
            self._view, self._remembered = view, {}
        key = self._keys.get(id(expression))
        if key is None or key[0] is not expression:
            key = self._keys[id(expression)] = (expression, repr(expression.parsed))
        found = self._remembered.get(key[1], _NOTHING)
        if found is _NOTHING:
            found = self._remembered[key[1]] = self.search(expression, view)
        return found

    def search(self, expression: Any, value: Any) -> Any:
        """What `expression.search(value, options)` gives, for a compiled expression; a
        JMESPathError when it builds more than MAX_VALUES values (see BoundedInterpreter)."""
        found = self._evaluators.get(id(expression))
        if found is not None and found[0] is expression:
            return found[1](value)
        return self.evaluator(expression)(value)


_NOTHING = object()

# An expression from a policy may build values that grow exponentially with its length:
# forty `[@, @][]` stages double a list forty times (2.5 GB was measured before this bound).
# Every list an expression builds (projections, flattens, multi-selects, function results)
# and every character of a string a function returns count against one search's budget.
MAX_VALUES = 1_000_000


@lru_cache(maxsize=1)
def _bounded_interpreter_class() -> Any:
    from jmespath import visitor

    class BoundedInterpreter(visitor.TreeInterpreter):  # type: ignore[misc]
        produced = 0
        limit = MAX_VALUES  # compile.py's closures count into `produced` against it too

        def over_budget(self) -> None:
            raise JMESPathError(f"the expression built over {MAX_VALUES:,} values: stopped")

        def _count(self, result: Any) -> Any:
            if isinstance(result, (list, dict, str)):
                self.produced += len(result)
                if self.produced > MAX_VALUES:
                    self.over_budget()
            return result

        def visit_flatten(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_flatten(node, value))

        def visit_projection(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_projection(node, value))

        def visit_filter_projection(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_filter_projection(node, value))

        def visit_value_projection(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_value_projection(node, value))

        def visit_multi_select_list(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_multi_select_list(node, value))

        def visit_multi_select_dict(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_multi_select_dict(node, value))

        def visit_function_expression(self, node: Any, value: Any) -> Any:
            return self._count(super().visit_function_expression(node, value))

    return BoundedInterpreter
