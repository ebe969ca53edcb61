"""Where a value is reachable from an object: a bounded walk over attributes, containers and
exception chains, reporting every path at which a string or bytes holds the value.

The walk follows ``args``, ``__cause__``, ``__context__``, ``__notes__``, exception groups,
``__dict__`` and ``__slots__`` of every object, mappings, sequences and sets, and also checks
each object's ``repr``. It does not enter modules, classes, functions, frames or tracebacks
(their locals are a debugger's view, documented as out of scope), weak references, or the
objects ``opaque`` names (SDK clients, which must hold the key to send it). A ``Secret`` is
checked through its ``repr``/``str`` only: its value is what ``reveal()`` is for.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable, Mapping

from llm_core.config import Secret

MAX_DEPTH = 24
MAX_NODES = 50_000
_SKIPPED = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
            types.FrameType, types.TracebackType, types.CodeType, weakref.ref)


def reachable(root: object, value: str, *, opaque: Callable[[object], bool] = lambda obj: False) -> list[str]:
    """The paths from ``root`` at which ``value`` (as text or UTF-8 bytes) can be read."""
    needle, raw = value, value.encode()
    found: list[str] = []
    seen: set[int] = set()
    keep: list[object] = []  # objects made on the way (e.g. property values) stay alive: ids stay unique
    stack: list[tuple[object, str, int]] = [(root, "root", 0)]
    while stack and len(seen) < MAX_NODES:
        obj, path, depth = stack.pop()
        if isinstance(obj, str):
            if needle in obj:
                found.append(path)
            continue
        if isinstance(obj, bytes | bytearray | memoryview):
            if raw in bytes(obj):
                found.append(path)
            continue
        if obj is None or isinstance(obj, int | float | complex | bool) or id(obj) in seen or depth > MAX_DEPTH:
            continue
        seen.add(id(obj))
        if isinstance(obj, Secret):
            if needle in repr(obj) + str(obj) + format(obj):
                found.append(f"{path} (Secret shown)")
            continue
        if isinstance(obj, _SKIPPED) or opaque(obj):
            continue
        try:
            shown = repr(obj)
        except Exception:  # an object whose repr fails shows nothing
            shown = ""
        if needle in shown:
            found.append(f"{path} (repr)")
        children: list[tuple[object, str]] = []
        if isinstance(obj, Mapping):
            children += [(k, f"{path}<key>") for k in obj] + [(v, f"{path}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, list | tuple | set | frozenset):
            children += [(item, f"{path}[{i}]") for i, item in enumerate(obj)]
        if isinstance(obj, BaseException):
            children += [(obj.args, f"{path}.args"), (obj.__cause__, f"{path}.__cause__"),
                         (obj.__context__, f"{path}.__context__")]
            if isinstance(obj, BaseExceptionGroup):
                children.append((obj.exceptions, f"{path}.exceptions"))
        attributes = getattr(obj, "__dict__", None)
        if isinstance(attributes, Mapping):
            children += [(v, f"{path}.{k}") for k, v in attributes.items()]
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                    children.append((getattr(obj, slot), f"{path}.{slot}"))
        keep.extend(child for child, _ in children)
        stack.extend((child, where, depth + 1) for child, where in children)
    return found
