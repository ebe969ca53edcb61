"""Fallback routing: a provider-shaped object that moves to the next capable provider when a
call fails in a way retries could not cure (:mod:`.router`), through one fallback loop
(:mod:`.fallback`) over the providers a call may use, in order (:mod:`.policy`)."""

from llm_core.errors import FallbackExhaustedError
from llm_core.routing.policy import ProviderSource, should_fall_back
from llm_core.routing.router import AsyncRouter, Router

__all__ = ["AsyncRouter", "FallbackExhaustedError", "ProviderSource", "Router", "should_fall_back"]
