"""The provider class plugins subclass, its async view, and the parts one call goes through:
settings (:mod:`.settings`), request building (:mod:`.requests`), retries, pricing and observers
(:mod:`.execution`) and streams (:mod:`.streams`)."""

from llm_core.provider.base import AsyncProvider, BaseProvider, StreamParser

__all__ = ["AsyncProvider", "BaseProvider", "StreamParser"]
