"""The provider base class plugins subclass, its async view, and the machinery of one call:
settings (:mod:`.settings`), request building (:mod:`.chat_requests`), retries and observers
(:mod:`.execution`) and streams (:mod:`.streams`)."""

from llm_core.provider.base import AsyncProvider, BaseProvider, StreamParser

__all__ = ["AsyncProvider", "BaseProvider", "StreamParser"]
