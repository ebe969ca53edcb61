"""ToolSpec and ToolCall."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from llm_core import ToolCall, ToolSpec

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@pytest.mark.parametrize("name", ["get_weather", "_private", "ns.tool", "a:b-c", "x" * 128])
def test_valid_tool_names(name: str) -> None:
    assert ToolSpec(name=name).name == name


@pytest.mark.parametrize("name", ["", " ", "1tool", "has space", "x" * 129, "emoji🙂", "tool\n", "-dash"])
def test_invalid_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="tool name"):
        ToolSpec(name=name)


@pytest.mark.parametrize(
    "parameters",
    [
        {},
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"properties": {}},
        {"type": "object", "properties": []},  # PHP-style empty array
    ],
)
def test_empty_properties_are_always_sent_as_an_object(parameters: dict[str, Any]) -> None:
    spec = ToolSpec(name="ping", parameters=parameters)
    assert spec.parameters["type"] == "object"
    assert spec.parameters["properties"] == {}
    assert json.dumps(spec.parameters["properties"]) == "{}"


def test_default_parameters_are_an_empty_object_schema() -> None:
    assert ToolSpec(name="ping").parameters == {"type": "object", "properties": {}}


def test_a_full_schema_is_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    assert ToolSpec(name="weather", description="Forecast", parameters=schema).parameters == schema


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "string"},
        {"type": "object", "properties": {"a": {}}, "required": ["b"]},
        {"type": "object", "properties": {"a": {}}, "required": "a"},
        {"type": "object", "properties": "nope"},
        {"type": "object", "properties": 0},
    ],
)
def test_non_object_or_inconsistent_schemas_are_refused(parameters: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="tool parameters"):
        ToolSpec(name="t", parameters=parameters)


def test_tool_call_decodes_json_string_arguments() -> None:
    call = ToolCall(id="call_1", name="weather", arguments='{"city": "Oslo", "days": [1, 2]}')
    assert call.arguments == {"city": "Oslo", "days": [1, 2]}


@pytest.mark.parametrize("empty", [None, "", {}])
def test_tool_call_without_arguments_has_an_empty_mapping(empty: Any) -> None:
    assert ToolCall(id="c", name="f", arguments=empty).arguments == {}
    assert ToolCall(id="c", name="f").arguments == {}


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_arguments_as_json_text_or_mapping_are_the_same(arguments: dict[str, Any]) -> None:
    assert ToolCall(id="c", name="f", arguments=json.dumps(arguments)).arguments == arguments
    assert ToolCall(id="c", name="f", arguments=arguments).arguments == arguments


@given(json_values.filter(lambda v: not isinstance(v, dict) and v != ""))
def test_arguments_that_decode_to_a_non_object_are_refused(value: Any) -> None:
    with pytest.raises(ValidationError, match="JSON object"):
        ToolCall(id="c", name="f", arguments=json.dumps(value))


def test_arguments_that_are_not_json_are_refused() -> None:
    with pytest.raises(ValidationError, match="not valid JSON"):
        ToolCall(id="c", name="f", arguments="{city: Oslo}")


@pytest.mark.parametrize(("id_", "name"), [("", "f"), ("c", "")])
def test_tool_call_needs_id_and_name(id_: str, name: str) -> None:
    with pytest.raises(ValidationError):
        ToolCall(id=id_, name=name)
