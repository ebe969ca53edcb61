"""The runner as a separate process, for the resume tests to kill: ``run_job.py IN OUT BASE_URL
[local]``. The key comes from this process's own environment (``OPENAI_API_KEY``), as on a worker."""

from __future__ import annotations

import sys

from core_openai_plugin.provider import OpenAIProvider
from llm_core.batch import run

if __name__ == "__main__":
    source, output, base_url = sys.argv[1:4]
    mode = sys.argv[4] if len(sys.argv) > 4 else "batch"
    provider = OpenAIProvider(base_url=base_url, timeout=10)
    summary = run(source, output=output, provider=provider, mode=mode, poll_interval=0.05, chunk_size=40, concurrency=4)
    print(summary.model_dump_json())
