"""The runner as a separate process, for the resume tests to kill: ``run_job.py IN OUT BASE_URL
[local]``. The key comes from this process's own environment (``OPENAI_API_KEY``), as on a worker;
``RUN_JOB_TIMEOUT`` sets the call timeout (10 s). A typed error is printed as one JSON line
(``error``, ``message``, its attributes, ``seconds`` the run took to raise it), exit code 3."""

from __future__ import annotations

import json
import os
import sys
import time

from core_openai_plugin.provider import OpenAIProvider
from llm_core.batch import run
from llm_core.errors import LLMError

if __name__ == "__main__":
    source, output, base_url = sys.argv[1:4]
    mode = sys.argv[4] if len(sys.argv) > 4 else "batch"
    provider = OpenAIProvider(base_url=base_url, timeout=float(os.environ.get("RUN_JOB_TIMEOUT", "10")))
    started = time.monotonic()
    try:
        summary = run(
            source, output=output, provider=provider, mode=mode, poll_interval=0.05, chunk_size=40, concurrency=4
        )
    except LLMError as exc:
        fields = {k: v for k, v in vars(exc).items() if isinstance(v, str | int | None)}
        print(json.dumps({**fields, "error": type(exc).__name__, "seconds": time.monotonic() - started}))
        sys.exit(3)
    print(summary.model_dump_json())
