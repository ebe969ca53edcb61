"""The capability matrix (docs/capabilities.md), generated from a registry."""

from __future__ import annotations

from llm_core.features import Feature
from llm_core.registry import Registry

HEADER = """# Capability matrix

Generated from the registry by `python scripts/capability_matrix.py` (a test fails when this
file is stale). `yes` = offered; per-model rows show what each catalogue model offers.
"""


def capability_matrix(registry: Registry) -> str:
    """Markdown tables: features per provider, then per model."""
    features = list(Feature)
    specs = sorted(registry.providers(), key=lambda s: s.identifier)
    lines = [HEADER, "## Providers", ""]
    lines.append("| feature | " + " | ".join(s.identifier for s in specs) + " |")
    lines.append("|---|" + "---|" * len(specs))
    for feature in features:
        cells = ["yes" if feature in s.features else "" for s in specs]
        lines.append(f"| `{feature.value}` | " + " | ".join(cells) + " |")
    for spec in specs:
        lines += ["", f"## {spec.name} (`{spec.identifier}`)", ""]
        offered = [f for f in features if f in spec.features]
        lines.append("| model | " + " | ".join(f.value for f in offered) + " |")
        lines.append("|---|" + "---|" * len(offered))
        for model in spec.models:
            mark = " (default)" if model.id == spec.default_model else ""
            cells = ["yes" if f in model.features else "" for f in offered]
            lines.append(f"| `{model.id}`{mark} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
