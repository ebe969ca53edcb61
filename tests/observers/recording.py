"""An observer that records every event it hears, for the tests of any folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llm_core import hookimpl


@dataclass
class Recorder:
    """Records every observer event as ``(hook, event)``."""

    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self.events.append(("before", event))

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.events.append(("after", event))

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        self.events.append(("error", event))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for k, event in self.events if k == kind]
