"""Benchmarks of llm-core against the bare provider SDKs, over a loopback server."""
