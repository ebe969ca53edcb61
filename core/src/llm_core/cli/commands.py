"""One function per subcommand: ``cmd_<name>(args) -> exit code``."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

from llm_core.cli.options import choose_provider
from llm_core.cli.output import NBSP, Progress, emit_json, note, table, wrapped
from llm_core.errors import ConfigurationError, InvalidInputError, LLMError
from llm_core.features import Feature, parse_features
from llm_core.registry import get_registry
from llm_core.specs import ProviderSpec
from llm_core.untrusted import load_json, read_text_file

_MIME_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}


def _features(values: Any) -> str:
    return ", ".join(sorted(f.value for f in values))


def _availability(spec: ProviderSpec) -> str:
    if spec.credentials_present():
        return "yes"
    return f"no: {spec.missing_credentials()}"


def _plugin_versions() -> dict[str, str | None]:
    return {p.distribution: p.version for p in get_registry().plugins}


def cmd_providers(args: argparse.Namespace) -> int:
    registry = get_registry()
    versions = _plugin_versions()
    rows: list[dict[str, Any]] = []
    for spec in registry.providers():
        dist = spec.distribution or "(registered by hand)"
        rows.append(
            {
                "provider": spec.identifier,
                "name": spec.name,
                "distribution": dist,
                "version": versions.get(dist),
                "available": spec.credentials_present(),
                "availability": _availability(spec),
                "features": sorted(f.value for f in spec.features),
                "default_model": spec.default_model,
            }
        )
    if args.json:
        emit_json({"providers": rows, "plugin_errors": [str(e) for e in registry.plugin_errors]})
        return 0
    if not rows:
        for error in registry.plugin_errors:
            note(f"plugin error: {error}")
        note("no providers registered: pip install core-gemini-plugin or core-openai-plugin")
        return 4
    for r in rows:
        head = f"{r['provider']}  {r['distribution']} {r['version'] or ''}".rstrip()
        status = "ready" if r["available"] else r["availability"].replace("no: set", "needs", 1)
        print(wrapped(f"{head}  {status}", hanging="        "))
        print(wrapped(", ".join(r["features"]), indent="    "))
    for error in registry.plugin_errors:
        note(f"plugin error: {error}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    registry = get_registry()
    specs = [registry.spec(args.provider)] if args.provider else registry.providers()
    wanted = parse_features(args.feature) if args.feature else frozenset()
    rows: list[dict[str, Any]] = [
        {
            "provider": s.identifier,
            "model": m.id,
            "default": m.id == s.default_model,
            "features": sorted(f.value for f in m.features),
        }
        for s in specs
        for m in s.models
        if wanted <= m.features
    ]
    if args.json:
        emit_json({"models": rows})
        return 0
    aliases = _aliases_by_model()
    for spec in specs:
        groups: dict[tuple[str, ...], list[str]] = {}
        for r in rows:
            if r["provider"] == spec.identifier:
                notes = (["default"] if r["default"] else []) + aliases.get(r["model"], [])
                name = r["model"] + (f"{NBSP}({f',{NBSP}'.join(notes)})" if notes else "")
                groups.setdefault(tuple(r["features"]), []).append(name)
        if groups:
            print(spec.identifier)
        for features, names in groups.items():
            print(wrapped(", ".join(features) + ":", indent="  "))
            print(wrapped(", ".join(names), indent="      "))
    if not rows:
        note("no model has every feature asked for" if wanted else "no models")
    return 0


def _aliases_by_model() -> dict[str, list[str]]:
    """model → ``["alias flash"]`` for the models -m knows by another name."""
    from llm_core.cli.aliases import all_aliases

    found: dict[str, list[str]] = {}
    for alias, (model, _source) in all_aliases().items():
        found.setdefault(model, []).append(f"alias{NBSP}{alias}")
    return found


def cmd_route(args: argparse.Namespace) -> int:
    registry = get_registry()
    wanted = parse_features(args.features)
    prefer = [p.strip() for p in args.prefer.split(",")] if args.prefer else None
    selection = registry.select(*wanted, prefer=prefer, model=args.model)
    chosen = {
        "provider": selection.identifier,
        "model": selection.model,
        "reasons": list(selection.reasons),
        "alternatives": [
            {"provider": c.identifier, "model": c.model, "reasons": list(c.reasons)} for c in selection.alternatives
        ],
    }
    if args.json:
        emit_json({"features": sorted(f.value for f in wanted), **chosen})
        return 0
    print(f"{_features(wanted)} -> {selection.identifier} (model {selection.model or 'default'})")
    for reason in selection.reasons:
        print(f"  because: {reason}")
    for alt in selection.alternatives:
        print(f"  fallback: {alt.identifier} (model {alt.model or 'default'}): {'; '.join(alt.reasons)}")
    return 0


def _provider(args: argparse.Namespace, *features: Feature) -> Any:
    """The provider named by ``--provider`` (checked for ``features``), else the selected one."""
    from llm_core.cli.aliases import resolve_alias

    model = resolve_alias(args.model) if getattr(args, "model", None) else None
    chosen = choose_provider(args.provider, list(features), model)
    # these commands' calls take no model argument: the provider is built with it
    return get_registry().get(chosen.identifier, model=model) if model else chosen


def _read_prompt(value: str) -> str:
    if value == "-":
        import sys

        return sys.stdin.read()
    return value


def cmd_json(args: argparse.Namespace) -> int:
    schema = _json_file(args.schema, "--schema") if args.schema else None
    provider = _provider(args, Feature.JSON_MODE)
    result = provider.generate_json(_read_prompt(args.prompt), schema)
    emit_json(result if not args.json else {"provider": provider.identifier, "result": result})
    return 0


def cmd_image(args: argparse.Namespace) -> int:
    provider = _provider(args, Feature.IMAGE)
    options = {"size": args.size} if args.size else {}
    data, mime = provider.generate_image_bytes(args.prompt, **options)
    out: Path = args.out
    if not out.suffix:
        out = out.with_suffix(_MIME_SUFFIX.get(mime, ".bin"))
    out.write_bytes(data)
    if args.json:
        emit_json({"path": str(out), "mime_type": mime, "bytes": len(data), "provider": provider.identifier})
    else:
        print(f"{out} ({mime}, {len(data):,} bytes)")
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    texts = list(args.texts)
    if args.file:
        lines = read_text_file(args.file, what="--file").splitlines()
        texts += [line.strip() for line in lines if line.strip()]
    if not texts:
        raise ValueError("give texts as arguments or --file")
    provider = _provider(args, Feature.EMBEDDINGS)
    options = {"dimensions": args.dimensions} if args.dimensions else {}
    vectors: list[list[float]] = []
    progress = Progress(len(texts), "embedding", enabled=None if len(texts) > args.batch else False)
    model = None
    for start in range(0, len(texts), max(1, args.batch)):
        batch = texts[start : start + args.batch]
        response = provider.embeddings(batch, **options)
        vectors.extend(response.vectors)
        model = response.model
        progress.advance(len(batch))
    progress.close()
    if args.json:
        emit_json({"provider": provider.identifier, "model": model, "vectors": vectors})
    else:
        for text, vector in zip(texts, vectors, strict=True):
            preview = ", ".join(f"{v:.4f}" for v in vector[:4])
            print(f"{text[:40]!r}: [{preview}, …] ({len(vector)} dims)")
    return 0


def _json_file(path: Path, what: str) -> Any:
    """A JSON file given on the command line: bounded, regular files only, nesting bounded."""
    try:
        return load_json(read_text_file(path, what=what), what=f"{what}: {path}")
    except InvalidInputError:
        raise
    except ValueError as exc:
        raise InvalidInputError(f"{what}: {path} is not valid JSON: {exc}") from None


def _load_questions(path: Path) -> list[Any]:
    """The questions of a JSON or TOML file (a list, or a ``questions`` list / ``[[questions]]``
    tables), each checked with a message that names the question and the field."""
    from pydantic import TypeAdapter, ValidationError

    from llm_core.decisions import Question

    if path.suffix != ".toml":
        data: Any = _json_file(path, "--questions")
    else:
        try:
            data = tomllib.loads(read_text_file(path, what="--questions"))
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInputError(f"--questions {path}: not valid TOML: {exc}") from None
    questions = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(questions, list) or not questions:
        raise InvalidInputError(
            f"--questions {path}: expected a list of questions (or a 'questions' list; in TOML, [[questions]] tables)"
        )
    adapter: TypeAdapter[Question] = TypeAdapter(Question)
    for number, question in enumerate(questions, 1):
        if not isinstance(question, dict):
            raise InvalidInputError(
                f"--questions {path}: question {number} must be a table with key, kind, instructions"
            )
        try:
            adapter.validate_python(question)
        except ValidationError as exc:
            name = f" ({question['key']!r})" if isinstance(question.get("key"), str) else ""
            raise InvalidInputError(f"--questions {path}: question {number}{name}: {_readable(exc)}") from None
    return questions


def _readable(exc: Any) -> str:
    """A question's validation errors as ``field: what is wrong``, without Pydantic's internals."""
    kinds = "yes_no, choice or score"
    parts = []
    for error in exc.errors():
        if error["type"] == "union_tag_not_found":
            parts.append(f"kind: missing ({kinds})")
            continue
        if error["type"] == "union_tag_invalid":
            parts.append(f"kind: {error['input'].get('kind')!r} is not {kinds}")
            continue
        field = ".".join(str(p) for p in error["loc"][1:]) or "question"  # loc[0] is the kind
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {'missing' if error['type'] == 'missing' else message}")
    return "; ".join(parts)


def cmd_decide(args: argparse.Namespace) -> int:
    questions = _load_questions(args.questions)  # bad input stops before a provider is built
    provider = _provider(args, Feature.DECISION)
    subject = {"task": args.subject, "candidate": args.candidate, "evidence": args.evidence}
    response = provider.decide(subject, questions)
    if args.json:
        emit_json(response.model_dump(mode="json"))
        return 0
    for key, answer in response.answers.items():
        detail = f"p(yes)={answer.value:.2f}" if answer.kind == "yes_no" and answer.value is not None else ""
        conf = f" confidence={answer.confidence:.2f}" if answer.confidence is not None else ""
        print(f"{key}: {answer.choice if answer.choice is not None else answer.value} {detail}{conf}".rstrip())
    note(f"({response.provider} {response.model}, probabilities: {response.probability_kind.value})")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    registry = get_registry()
    specs = [] if args.provider else registry.providers()
    identifiers = [args.provider] if args.provider else [s.identifier for s in specs if s.credentials_present()]
    # providers not set up are listed, not checked: they are no failure of the ones in use
    results: list[dict[str, Any]] = [
        {"provider": s.identifier, "success": None, "message": "not configured: skipped"}
        for s in specs
        if s.identifier not in identifiers
    ]
    worst = 0
    for identifier in identifiers:
        try:
            status = registry.get(identifier).test_connection()
            results.append(
                {"provider": identifier, "success": True, "message": status.message, "models": len(status.models)}
            )
        except LLMError as exc:
            from llm_core.cli.exits import exit_code_for

            code = exit_code_for(exc)
            worst = worst or code
            results.append({"provider": identifier, "success": False, "message": str(exc)})
    if args.json:
        emit_json({"checks": results})
    else:
        table(
            ["provider", "ok", "message"],
            [[r["provider"], {True: "yes", False: "NO", None: "-"}[r["success"]], r["message"]] for r in results],
        )
    return worst


def cmd_plugins(args: argparse.Namespace) -> int:
    registry = get_registry()
    plugins = [
        {"distribution": p.distribution, "version": p.version, "entry_point": p.entry_point, "load_ms": p.load_ms}
        for p in registry.plugins
    ]
    errors = [
        {"distribution": e.distribution, "stage": e.stage, "error": f"{type(e.error).__name__}: {e.error}"}
        for e in registry.plugin_errors
    ]
    if args.json:
        emit_json({"plugins": plugins, "errors": errors})
    else:
        table(
            ["distribution", "version", "entry point", "load (ms)"],
            [[p["distribution"], p["version"] or "", p["entry_point"], f"{p['load_ms']:.1f}"] for p in plugins],
        )
        for error in errors:
            note(f"load error: {error['distribution']} ({error['stage']}): {error['error']}")
    return 5 if args.strict and errors else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from llm_core.cli.demo import run_demo

    return run_demo(args)


def cmd_new_plugin(args: argparse.Namespace) -> int:
    from llm_core.cli.scaffold import write_plugin

    path = write_plugin(args.name, args.dir)
    if args.json:
        emit_json({"path": str(path)})
    else:
        print(f"wrote {path}")
        note(f'next: pip install -e "{path}[test]" && pytest {path}/tests')
    return 0


__all__ = ["ConfigurationError"]
