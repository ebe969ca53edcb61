"""Testing helpers: a scriptable fake provider for application tests
(:class:`FakeProvider`), the conformance kit for plugin authors
(:mod:`llm_core.testing.conformance`) and readable vcrpy cassettes
(:mod:`llm_core.testing.cassettes`)."""

from llm_core.testing.fake import FakeProvider, FakeReply, fake_spec

__all__ = ["FakeProvider", "FakeReply", "fake_spec"]
