"""Testing helpers: for applications, :class:`TestProvider` (valid answers derived from each
request), :class:`FunctionProvider` (answers from your function) and the scriptable
:class:`FakeProvider`, plus a pytest plugin (fixtures ``llm_registry``, ``test_provider`` and a
network guard, :mod:`llm_core.testing.pytest_plugin`); for plugin authors, the conformance kit
(:mod:`llm_core.testing.conformance`) and readable vcrpy cassettes
(:mod:`llm_core.testing.cassettes`)."""

from llm_core.testing.fake import FakeProvider, FakeReply, fake_spec
from llm_core.testing.kit import CallInfo, FunctionProvider, TestProvider

__all__ = ["CallInfo", "FakeProvider", "FakeReply", "FunctionProvider", "TestProvider", "fake_spec"]
