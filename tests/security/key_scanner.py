"""Find anything shaped like an API key or bearer token in files (cassettes).

Shapes: Google API keys (``AIza`` + 35), Google OAuth access tokens (``ya29.``), OpenAI keys
(``sk-...``, ``sk-proj-...``, ``sk-svcacct-...``, ``sess-...``) and ``Bearer <token>`` values other than
the ``FILTERED`` placeholder. JSON cassettes are also read structurally: key headers and key
query parameters must be ``FILTERED`` or absent, and base64 bodies are decoded and scanned too.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from llm_core.testing.cassettes import FILTERED, SECRET_HEADERS, SECRET_QUERY

SHAPES: dict[str, re.Pattern[str]] = {
    "google api key": re.compile(r"AIza[0-9A-Za-z_\-]{35}"),
    "google oauth token": re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    "openai key": re.compile(r"\b(?:sk|sess)-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    "bearer token": re.compile(r"(?i)\bbearer\s+(?!" + FILTERED + r"\b)[A-Za-z0-9._~+/\-]{8,}=*"),
}


@dataclass(frozen=True)
class Finding:
    path: str
    where: str
    shape: str
    excerpt: str  # masked: never print what was found in full

    def __str__(self) -> str:
        return f"{self.path} ({self.where}): {self.shape} {self.excerpt}"


def _mask(text: str) -> str:
    return text[:6] + "..." if len(text) > 6 else "..."


def scan_text(text: str, path: str, where: str = "text") -> Iterator[Finding]:
    for shape, pattern in SHAPES.items():
        for match in pattern.finditer(text):
            yield Finding(path, where, shape, _mask(match.group(0)))


def _interactions(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("interactions"), list):
        return [i for i in data["interactions"] if isinstance(i, dict)]
    return []


def scan_cassette(data: Any, path: str) -> Iterator[Finding]:
    """Structural checks of a readable-JSON (or plain vcrpy) cassette."""
    for index, interaction in enumerate(_interactions(data)):
        request = interaction.get("request") or {}
        response = interaction.get("response") or {}
        for side, message in (("request", request), ("response", response)):
            headers = message.get("headers") or {}
            for name, values in headers.items():
                if name.lower() in SECRET_HEADERS:
                    listed = values if isinstance(values, list) else [values]
                    if any(v != FILTERED for v in listed):
                        yield Finding(path, f"interaction {index} {side} header {name}", "unfiltered secret header",
                                      _mask(str(listed[0])))
            body = message.get("body")
            if isinstance(body, dict) and isinstance(body.get("base64"), str):
                try:
                    decoded = base64.b64decode(body["base64"]).decode("utf-8", "replace")
                except (binascii.Error, ValueError):
                    decoded = ""
                yield from scan_text(decoded, path, f"interaction {index} {side} base64 body")
        uri = str(request.get("uri") or "")
        for name, value in parse_qsl(urlsplit(uri).query, keep_blank_values=True):
            if name.lower() in SECRET_QUERY and value != FILTERED:
                yield Finding(path, f"interaction {index} query parameter {name}", "unfiltered secret parameter",
                              _mask(value))


def scan_file(path: Path, root: Path) -> list[Finding]:
    name = str(path.relative_to(root))
    text = path.read_bytes().decode("utf-8", "replace")
    findings = list(scan_text(text, name))
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        findings += list(scan_cassette(data, name))
    return findings


def scan_tree(root: Path) -> tuple[int, list[Finding]]:
    """``(files scanned, findings)`` for every file under ``root``."""
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    findings = [finding for path in files for finding in scan_file(path, root)]
    return len(files), findings
