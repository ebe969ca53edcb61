"""Testing helpers: a scriptable fake provider for application tests (and, later, the
conformance kit for plugin authors)."""

from llm_core.testing.fake import FakeProvider, FakeReply, fake_spec

__all__ = ["FakeProvider", "FakeReply", "fake_spec"]
