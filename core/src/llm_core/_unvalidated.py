"""Pydantic instances built without validation, for values validation is known to accept.

An instance's whole state is four slots of ``BaseModel``: ``__dict__`` (the field values),
``__pydantic_fields_set__``, ``__pydantic_extra__`` and ``__pydantic_private__``, which is what
``model_construct`` leaves. Each caller proves (and a property test checks) that validation of
its input gives exactly the state it builds. The slots' own descriptors set them: ``object.
__setattr__`` would look every name up on the type again, and the objects built here are the
most frequent ones (an event per streamed delta, the messages and request of every call).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_slots: Any = BaseModel.__dict__
_set_values = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


def unvalidated(model: type[M], values: dict[str, Any], fields_set: set[str], extra: dict[str, Any] | None) -> M:
    """A ``model`` holding ``values`` (every field, in field order) as they are, with
    ``fields_set`` counted as set, ``extra`` as its extras (``None`` unless the model allows
    extras) and no private state."""
    instance: M = _new(model)
    _set_values(instance, values)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, extra)
    _set_private(instance, None)
    return instance
