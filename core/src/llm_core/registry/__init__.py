"""The registry: providers discovered from plugins (:mod:`.discovery`, cached by
:mod:`.cache`), ranked for a request (:mod:`.candidates`) and selected by capability."""

from llm_core.registry.candidates import Candidate
from llm_core.registry.registry import Registry, Selection, get_registry, reset_registry

__all__ = ["Candidate", "Registry", "Selection", "get_registry", "reset_registry"]
