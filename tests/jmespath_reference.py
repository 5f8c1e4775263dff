"""The reference the compiler (kubegap_lint/catalog/compile.py) is tested against: jmespath's own
tree interpreter with the run's policy functions, counting the values it builds as the
compiled closures count them (budget.Budget), and stopping at the same bound."""

from __future__ import annotations

from typing import Any

import jmespath
from jmespath import visitor
from jmespath.exceptions import JMESPathError

from kubegap_lint.catalog.budget import MAX_VALUES, tree_size, walked_size
from kubegap_lint.catalog.functions import PolicyFunctions


class BoundedInterpreter(visitor.TreeInterpreter):  # type: ignore[misc]
    """Counts the length of every list and object a node builds, and of every function result
    that is a list, an object or a string."""

    produced = 0

    def _count(self, result: Any) -> Any:
        if isinstance(result, (list, dict, str)):
            self.produced += len(result)
            if self.produced > MAX_VALUES:
                raise JMESPathError(f"the expression built over {MAX_VALUES:,} values: stopped")
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

    def _spend(self, size: int) -> None:
        self.produced += size
        if self.produced > MAX_VALUES:
            raise JMESPathError(f"the expression built over {MAX_VALUES:,} values: stopped")

    def visit_comparator(self, node: Any, value: Any) -> Any:
        if node["value"] not in ("eq", "ne"):
            return super().visit_comparator(node, value)
        # As the compiled closures do: comparing two lists or objects walks both, charged first.
        left, right = (self.visit(child, value) for child in node["children"])
        if isinstance(left, (list, dict)) and isinstance(right, (list, dict)):
            self._spend(min(tree_size(left), tree_size(right)))
        equal = visitor._equals(left, right)
        return equal if node["value"] == "eq" else not equal

    def visit_function_expression(self, node: Any, value: Any) -> Any:
        arguments = [self.visit(child, value) for child in node["children"]]
        size = walked_size(node["value"], arguments)
        if size is not None:
            self._spend(size)
        return self._count(self._functions.call_function(node["value"], arguments))


class ReferenceInterpreter:
    """`search` as functions.PolicyInterpreter has it, by walking the tree; `produced` is what
    the last search built."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.interpreter = BoundedInterpreter(jmespath.Options(custom_functions=PolicyFunctions(params)))

    @property
    def produced(self) -> int:
        return int(self.interpreter.produced)

    def search(self, expression: Any, value: Any) -> Any:
        self.interpreter.produced = 0
        return self.interpreter.visit(expression.parsed, value)
