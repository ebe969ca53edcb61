"""Inputs shared by the Gemini cassette tests and ``cassette_author.py``.

Cassettes match on request bodies, so these values are frozen: changing one means re-recording
the cassettes that use it (``python -m tests.gemini.cassette_author NAME``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from llm_core.decisions import ChoiceQuestion, DecisionSubject, Question, ScoreQuestion, YesNoQuestion
from llm_core.testing.fake import PNG_1X1
from llm_core.tools import ToolSpec

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "gemini"
KEY = "test-key"

PNG = PNG_1X1
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>>endobj\n"
    b"4 0 obj<</Length 44>>stream\nBT /F1 12 Tf 20 100 Td (Invoice 42: 99 EUR) Tj ET\nendstream endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)

#: A PNG signature with a truncated body: passes the local checks, the service cannot decode it.
BROKEN_PNG = PNG[:24]
#: A PDF without pages.
EMPTY_PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n" \
    b"trailer<</Root 1 0 R>>\n%%EOF\n"

SYSTEM = "You are a concise geography tutor."
QUESTION = "What is the capital of France?"
#: The prompt of the router fallback test: Gemini answers 429, OpenAI counts it.
COUNT_FALLBACK_PROMPT = "How long is this prompt in tokens?"
THINK_QUESTION = "How many times does the letter r appear in strawberry?"
#: A long, fixed system instruction: Gemini 2.5 caches repeated prompt prefixes of 1024 tokens
#: and more (implicit caching) and reports them as ``cachedContentTokenCount``.
STYLE_GUIDE = "You are the support assistant of a bookshop. House rules:\n" + "".join(
    f"{n}. Rule {n}: answer politely, name the shelf of every book you mention, quote prices in euros "
    "with two decimals, and never promise a delivery date you cannot check.\n" for n in range(1, 41))

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = ToolSpec(name="get_time", description="The current UTC time.")
LOOKUP = ToolSpec(
    name="lookup",
    description="Look a record up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)

#: Tool output → ``functionResponse.response`` on the wire: a JSON object as it is, a JSON list as
#: ``{"0": …, "1": …}``, anything else as ``{"result": "<the output>"}``.
TOOL_RESULT_TABLE = [
    ("{}", {}),
    ('{"0":"zero","1":"one"}', {"0": "zero", "1": "one"}),
    ('["zero","one"]', {"0": "zero", "1": "one"}),
    ('{"items":[]}', {"items": []}),
    ("7", {"result": "7"}),
    ('"value"', {"result": '"value"'}),
    ("not json", {"result": "not json"}),
]


class CityLocation(BaseModel):
    """A city and its country."""

    city: str
    country: str


COLORS_SCHEMA = {
    "type": "object",
    "properties": {"colors": {"type": "array", "items": {"type": "string"}}},
    "required": ["colors"],
}

SUBJECT = DecisionSubject(
    task="Triage a customer support ticket.",
    candidate="Ticket #4821",
    evidence=["I was charged twice for my March invoice.", "Please refund the duplicate payment today."],
)
QUESTIONS: list[Question] = [
    YesNoQuestion(key="needs_refund", instructions="Does the customer ask for money back?",
                  yes_description="A refund or chargeback is requested.", no_description="No money is requested."),
    ChoiceQuestion(key="category", instructions="Which team should handle the ticket?",
                   options=["billing", "technical", "sales"],
                   option_descriptions={"billing": "Invoices, payments and refunds."}),
    ScoreQuestion(key="urgency", instructions="How urgent is the ticket?", levels=["low", "medium", "high"]),
]
