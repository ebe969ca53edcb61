"""The conversations the cassette tests replay and ``author_cassettes.py`` records: their tools,
settings and messages are frozen (cassettes match on request bodies)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

ROOT = Path(__file__).resolve().parents[2]
GEMINI_CASSETTES = ROOT / "cassettes" / "gemini"
OPENAI_CASSETTES = ROOT / "cassettes" / "openai"
KEY = "test-key"

SYSTEM = "You are a concise travel assistant. Use the tools for live data."
FIRST = "What's the weather in Paris and Tokyo, and the local time in Tokyo?"
SECOND = "And the weather in Atlantis?"
THIRD = "Thanks! Which of the two cities is warmer?"
GEMINI_MODEL = "gemini-3-flash-preview"
OPENAI_MODEL = "gpt-5.4-mini"

WEATHER = {"Paris": {"temp_c": 18, "sky": "cloudy"}, "Tokyo": {"temp_c": 24, "sky": "clear"}}


def get_weather(city: Annotated[str, Field(description="City name, e.g. Paris")]) -> dict[str, Any]:
    """Current weather for a city."""
    if city not in WEATHER:
        raise LookupError(f"no weather station in {city}")
    return WEATHER[city]


def local_time(city: Annotated[str, Field(description="City name, e.g. Tokyo")]) -> str:
    """Local time in a city (24-hour clock)."""
    return {"Tokyo": "21:30", "Paris": "14:30"}.get(city, "unknown")


TOOLS = [get_weather, local_time]


def settings(model: str | None) -> dict[str, Any]:
    """The keyword arguments of ``conversation(...)`` in every flow."""
    options: dict[str, Any] = {"system": SYSTEM, "tools": TOOLS, "thinking": {"level": "low"}}
    if model is not None:
        options["model"] = model
    return options
