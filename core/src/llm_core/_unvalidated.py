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

#: The four setters, for a caller that builds in its own frame (one per streamed delta).
new_instance = object.__new__
_slots: Any = BaseModel.__dict__
set_values = _slots["__dict__"].__set__
set_fields_set = _slots["__pydantic_fields_set__"].__set__
set_extra = _slots["__pydantic_extra__"].__set__
set_private = _slots["__pydantic_private__"].__set__


def unvalidated(model: type[M], values: dict[str, Any], fields_set: set[str], extra: dict[str, Any] | None) -> M:
    """A ``model`` holding ``values`` (every field, in field order) as they are, with
    ``fields_set`` counted as set, ``extra`` as its extras (``None`` unless the model allows
    extras) and no private state."""
    instance: M = new_instance(model)
    set_values(instance, values)
    set_fields_set(instance, fields_set)
    set_extra(instance, extra)
    set_private(instance, None)
    return instance
