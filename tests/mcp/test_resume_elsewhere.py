"""A call of an MCP tool that waits for approval is saved in one process, approved and run in
another, exactly once; a process that dies between "started" and the call leaves a call that
is reported (ToolInterruptedError), never run again silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llm_core import InvalidInputError, ToolCall, ToolInterruptedError
from llm_core.conversation import Conversation
from llm_core.testing import FakeProvider, FakeReply
from tests.mcp.servers import PYTHONPATH, ROOT, stdio_server

pytestmark = pytest.mark.timeout(240)


def resume_elsewhere(saved: Path, ledger: Path, out: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.mcp.resume_child", str(saved), str(ledger), str(out), mode],
        cwd=ROOT,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin", "LLM_CORE_PLUGINS": ""},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture
def saved(fake: FakeProvider, ledger: Path, tmp_path: Path) -> Path:
    """A conversation whose ``pay`` call waits for approval, saved to a file."""
    fake.script(FakeReply(tool_calls=[ToolCall(id="call_pay", name="pay", arguments={"amount": 25})]))
    with fake.conversation(tools=[stdio_server(ledger, requires_approval=True)]) as chat:
        chat.send("Pay the invoice of 25")
        assert [c.id for c in chat.pending_approvals] == ["call_pay"]
        path = tmp_path / "saved.json"
        path.write_text(chat.to_json())
    assert not ledger.exists()
    return path


def test_approved_in_another_process_it_runs_exactly_once(
    saved: Path, ledger: Path, tmp_path: Path, fake: FakeProvider
) -> None:
    out = tmp_path / "after.json"
    done = resume_elsewhere(saved, ledger, out, "approve")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Paid."
    key = json.loads(saved.read_text())["tool_calls"]["call_pay"]["key"]
    assert ledger.read_text().splitlines() == [f"25 {key}"]  # once, with the call's key
    after = Conversation.from_json(out.read_text(), provider=fake, tools=[stdio_server(ledger)])
    assert after.pending_approvals == [] and after.messages[-1].content == "Paid."
    with pytest.raises(InvalidInputError, match="nothing to continue"):
        after.send()
    assert len(ledger.read_text().splitlines()) == 1


def test_a_crash_between_started_and_the_call_is_reported(
    saved: Path, ledger: Path, tmp_path: Path, fake: FakeProvider
) -> None:
    out = tmp_path / "checkpoint.json"
    died = resume_elsewhere(saved, ledger, out, "crash")
    assert died.returncode == 9, died.stderr
    record = json.loads(out.read_text())["tool_calls"]["call_pay"]
    assert (record["approval"], record["started"], record["finished"]) == ("approved", True, False)
    resumed = Conversation.from_json(out.read_text(), provider=fake, tools=[stdio_server(ledger)])
    with pytest.raises(ToolInterruptedError) as caught:
        resumed.send()
    assert caught.value.call.id == "call_pay" and not ledger.exists()
