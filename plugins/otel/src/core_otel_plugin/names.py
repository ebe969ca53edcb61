"""Names shared by the call spans (observer.py) and the scope spans (turns.py)."""

#: ``gen_ai.provider.name`` values the conventions define, by llm-core provider identifier.
PROVIDER_NAMES = {"gemini": "gcp.gemini", "vertex": "gcp.vertex_ai", "openai": "openai"}
#: Not part of the conventions: the call's cost in US dollars at list prices (a string, exact).
COST_ATTRIBUTE = "llm_core.usage.cost_usd"
