"""Records: the part of @dataclass the pipeline's value classes use, at a fraction of its cost.

`dataclasses` writes each class's methods as source text and compiles it when the module is
imported: about a millisecond a class, most of a one-file run's own start-up over some forty
classes (pre-commit starts the tool every commit). `record` gives every class the same
shared functions, which read the class's field tuples, so defining a class costs microseconds:

- `__init__` with the fields in order, positional or by keyword, defaults and
  `field(default_factory=...)` (a class may write its own `__init__` instead: the hot ones do);
- `__repr__`, `__eq__` over the compared fields; `frozen=True`: assignments raise and
  `__hash__` hashes the compared fields, as dataclass's; not frozen: unhashable, as dataclass's;
- `order=True`: `<`, `<=`, `>`, `>=` by the compared fields;
- `replace(obj, **changes)` and `fields(cls)` (the names, in order) for what dataclasses'
  functions of the same names did.

Annotations are read as written (strings, with `from __future__ import annotations`); they
are never evaluated. A record may not inherit another record's fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**kwargs: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated

_T = TypeVar("_T")
_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    __slots__ = ("default", "default_factory", "compare", "hash", "repr", "init")

    def __init__(self, default: Any, default_factory: Any, compare: bool, hash: bool | None, repr: bool,
                 init: bool = True) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash
        self.repr = repr
        self.init = init


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] = _MISSING, compare: bool = True,
          hash: bool | None = None, repr: bool = True, init: bool = True) -> Any:
    """As dataclasses.field, for a record (init=False: set to its default, not an argument)."""
    return Field(default, default_factory, compare, hash, repr, init)


def fields(cls: Any) -> tuple[str, ...]:
    """A record's field names, in order."""
    return tuple(cls.__record_fields__)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of a record with some fields changed (as dataclasses.replace, which it calls for a
    dataclass such as core/model.py's Finding)."""
    specs = getattr(type(obj), "__record_specs__", None)
    if specs is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    values = {name: getattr(obj, name) for name in fields(type(obj)) if specs[name].init}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field(s) {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(obj)(**values)  # type: ignore[call-arg]


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_T] | None = None, /, *, frozen: bool = False, order: bool = False) -> Any:
    """Make a class a record (see the module's text); `@record` or `@record(frozen=True)`."""
    if cls is None:
        return lambda decorated: _make(decorated, frozen, order)
    return _make(cls, frozen, order)


def _make(cls: Any, frozen: bool, order: bool) -> Any:
    names: list[str] = []
    specs: dict[str, Field] = {}
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.replace("typing.", "").startswith("ClassVar"):
            continue
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            spec = value
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        else:
            spec = Field(value, _MISSING, True, None, True)
        names.append(name)
        specs[name] = spec
    # What the shared methods below read from the class (no function is made per class).
    cls.__record_fields__ = tuple(names)
    cls.__record_specs__ = specs
    cls.__record_init__ = tuple(n for n in names if specs[n].init)
    cls.__record_compared__ = tuple(n for n in names if specs[n].compare)
    cls.__record_hashed__ = tuple(n for n in names if specs[n].hash)
    cls.__record_shown__ = tuple(n for n in names if specs[n].repr)
    setattr(cls, "__match_args__", tuple(names))  # noqa: B010 - mypy: a class attribute set late
    own = cls.__dict__
    methods: dict[str, Any] = {"__init__": _init, "__repr__": _repr, "__eq__": _eq}
    if frozen:
        methods.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr, __hash__=_hash)
    elif "__hash__" not in own:
        methods["__hash__"] = None  # mutable and compared by value: unhashable, as dataclass's
    if order:
        methods.update(__lt__=_lt, __le__=_le, __gt__=_gt, __ge__=_ge)
    for name, method in methods.items():
        if name not in own:  # what the class writes itself stays
            setattr(cls, name, method)
    return cls


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    names = cls.__record_init__
    if len(args) > len(names):
        raise TypeError(f"{cls.__qualname__}() takes {len(names)} positional arguments but {len(args)} were given")
    put = object.__setattr__
    for name, value in zip(names, args, strict=False):  # fewer args than fields: the rest by keyword
        put(self, name, value)
    specs = cls.__record_specs__
    for name in names[len(args):]:
        if name in kwargs:
            value = kwargs.pop(name)
        else:
            spec = specs[name]
            if spec.default is not _MISSING:
                value = spec.default
            elif spec.default_factory is not _MISSING:
                value = spec.default_factory()
            else:
                raise TypeError(f"{cls.__qualname__}() missing required argument: '{name}'")
        put(self, name, value)
    if len(names) != len(specs):
        for name, spec in specs.items():
            if not spec.init:
                put(self, name, spec.default if spec.default_factory is _MISSING else spec.default_factory())
    if kwargs:
        raise TypeError(f"{cls.__qualname__}() got an unexpected or repeated keyword argument"
                        f" '{next(iter(kwargs))}'")


def _repr(self: Any) -> str:
    shown = type(self).__record_shown__
    return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"


def _values(value: Any) -> tuple[Any, ...]:
    return tuple(getattr(value, n) for n in type(value).__record_compared__)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, n) for n in type(self).__record_hashed__))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _lt(self: Any, other: Any) -> Any:
    return _values(self) < _values(other) if other.__class__ is self.__class__ else NotImplemented


def _le(self: Any, other: Any) -> Any:
    return _values(self) <= _values(other) if other.__class__ is self.__class__ else NotImplemented


def _gt(self: Any, other: Any) -> Any:
    return _values(self) > _values(other) if other.__class__ is self.__class__ else NotImplemented


def _ge(self: Any, other: Any) -> Any:
    return _values(self) >= _values(other) if other.__class__ is self.__class__ else NotImplemented
