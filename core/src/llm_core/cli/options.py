"""Options shared by ``prompt`` and ``chat``: ``-m`` (with aliases), ``-p``, ``-s``, ``-o KEY
VALUE``, ``-a FILE_OR_URL`` (``-a -``: standard input), ``--key``, ``-T/--functions``,
``--think``, ``--temperature``, ``--max-tokens``.

:func:`add_call_options` puts them on a sub-command's parser; :func:`call_setup` turns the parsed
values into what a call needs (the model id, the features, the call's keyword options and the
attachment parts). The interactive chat loop uses the same two functions.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from llm_core.errors import InvalidInputError, LLMError
from llm_core.features import Feature
from llm_core.untrusted import read_regular_file

#: Largest file ``-a`` reads: no provider takes more inline (OpenAI's documents: 32 MiB); the
#: chosen provider's own, often lower, limit is checked before the call is sent.
MAX_ATTACHMENT_BYTES = 32 * 1024 * 1024


def add_call_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", help="model id or alias (llm-core aliases list)")
    parser.add_argument("--provider", "-p", help="provider identifier (default: chosen by capability and model)")
    parser.add_argument("--system", "-s", help="system instructions")
    parser.add_argument(
        "--option",
        "-o",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="a provider option, e.g. -o top_p 0.9 (VALUE is read as JSON when it parses, else text)",
    )
    parser.add_argument(
        "--attachment",
        "-a",
        action="append",
        default=[],
        metavar="FILE_OR_URL",
        help="an image or PDF to send with the prompt ('-': read it from stdin; routes to vision/documents)",
    )
    parser.add_argument("--key", help="the API key for this call, or the name of a stored key (llm-core keys)")
    parser.add_argument(
        "--functions",
        "-T",
        metavar="FILE_OR_CODE",
        help="Python functions the model may call as tools: a .py file, or the code itself",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        metavar='"COMMAND ARGS"',
        help="an MCP server run over stdio: the model may call its tools (repeatable; the mcp extra)",
    )
    parser.add_argument("--think", action="store_true", help="ask for thinking and show it apart")
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--max-tokens", type=int)


@dataclass
class CallSetup:
    """What the parsed options ask of a call."""

    model: str | None
    features: list[Feature]
    options: dict[str, Any] = field(default_factory=dict)
    parts: list[Any] = field(default_factory=list)
    #: ``--key``: the provider is built with it instead of its configured key.
    key: str | None = None


def option_value(text: str) -> Any:
    """``-o`` values: JSON when they parse (numbers, booleans, lists, objects), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


#: The leading bytes of the types ``-a -`` accepts (standard input has no name to guess from).
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)


def sniffed_type(data: bytes) -> str | None:
    """The MIME type of image or PDF bytes, from their first bytes (WebP: ``RIFF....WEBP``)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _SIGNATURES if data.startswith(magic)), None)


def _stdin_attachment() -> Any:
    import sys

    from llm_core.messages import DocumentPart, ImagePart

    data = sys.stdin.buffer.read(MAX_ATTACHMENT_BYTES + 1)
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise InvalidInputError(f"-a -: standard input is larger than {MAX_ATTACHMENT_BYTES:,} bytes")
    mime = sniffed_type(data)
    if mime is None:
        raise InvalidInputError("-a -: standard input is not a PNG, JPEG, GIF or WebP image, nor a PDF document")
    return (
        ImagePart(data=data, mime_type=mime) if mime.startswith("image/") else DocumentPart(data=data, mime_type=mime)
    )


def attachment(source: str) -> Any:
    """An :class:`ImagePart` or :class:`DocumentPart` for a file path, an http(s) URL, or ``-``
    (standard input, its type told by its first bytes)."""
    from llm_core.messages import DocumentPart, ImagePart

    if source == "-":
        return _stdin_attachment()
    is_url = urlsplit(source).scheme in ("http", "https")
    mime, _ = mimetypes.guess_type(urlsplit(source).path if is_url else source)
    if mime is None or not (mime.startswith("image/") or mime == "application/pdf"):
        raise InvalidInputError(f"-a {source}: only images and PDF documents can be attached (type: {mime})")
    if is_url:
        return (
            ImagePart(url=source, mime_type=mime)
            if mime.startswith("image/")
            else DocumentPart(url=source, mime_type=mime)
        )
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"-a {source}: no such file")
    data = read_regular_file(path, limit=MAX_ATTACHMENT_BYTES, what="-a")
    if mime.startswith("image/"):
        return ImagePart(data=data, mime_type=mime)
    return DocumentPart(data=data, mime_type=mime, name=path.name)


def call_setup(args: argparse.Namespace, *extra: Feature) -> CallSetup:
    """The model (aliases resolved), the features the call needs, its options and attachments."""
    from llm_core.cli.aliases import resolve_alias
    from llm_core.messages import ImagePart

    parts = [attachment(source) for source in args.attachment]
    features = [Feature.CHAT, *extra]
    if args.think:
        features.append(Feature.THINKING)
    if any(isinstance(p, ImagePart) for p in parts):
        features.append(Feature.VISION)
    if any(not isinstance(p, ImagePart) for p in parts):
        features.append(Feature.DOCUMENTS)
    options: dict[str, Any] = {key: option_value(value) for key, value in args.option}
    named = {"system": args.system, "temperature": args.temperature, "max_tokens": args.max_tokens}
    options.update({k: v for k, v in named.items() if v is not None})
    if args.think:
        options["thinking"] = True
    model = resolve_alias(args.model) if args.model else None
    if model:
        options["model"] = model
    if args.functions or args.mcp:
        features.append(Feature.TOOLS)
    return CallSetup(model, list(dict.fromkeys(features)), options, parts, api_key(args.key))


def api_key(value: str | None) -> str | None:
    """``--key``: the name of a stored key (``llm-core keys set NAME``) gives that key; any
    other value is the key itself."""
    if not value:
        return None
    from llm_core.keystore import get_key

    return get_key(value) or value


def user_message(prompt: str, parts: list[Any]) -> Any:
    """The prompt as one user message, with the attachments after its text."""
    from llm_core.messages import ChatMessage

    return ChatMessage.user([prompt, *parts] if parts else prompt)


def choose_provider(provider: str | None, features: list[Feature], model: str | None, key: str | None = None) -> Any:
    """The provider named by ``-p`` (checked for ``features`` with ``model``), else the one
    ``select`` picks for the features and model. Pass the model with each call too. With
    ``key`` (``--key``) the provider is a new instance built with that key."""
    from llm_core.errors import UnsupportedFeatureError
    from llm_core.registry import get_registry

    registry = get_registry()
    if not provider:
        try:
            selected = registry.select(*features, model=model)
        except LLMError as exc:
            if model:
                exc.add_note(f"hint: -m {model}{model_hint(model)}")
            raise
        return selected.provider(api_key=key) if key else selected.provider()
    # the shared instance (the model goes with each call), or one of its own with --key
    chosen = registry.get(provider, api_key=key) if key else registry.get(provider)
    for feature in features:
        if not chosen.supports_feature(feature, model):
            raise UnsupportedFeatureError(
                f"{chosen.name} does not support {feature.value}" + (f" with model {model}" if model else ""),
                provider=chosen.identifier,
            )
    return chosen


#: ``-o`` names that have an option of their own, for the hint.
_OWN_OPTION = {"temperature": "--temperature", "max_tokens": "--max-tokens", "system": "-s", "model": "-m"}


def check_option_names(provider: Any, options: dict[str, Any]) -> None:
    """``-o KEY``: a key the provider does not declare and that is one typo away from a field of
    every chat request (``temprature``) is refused with the right name. Any other key is the
    provider's to check (it knows its per-call options)."""
    import difflib

    from llm_core.config import declared_settings
    from llm_core.requests import ChatRequest

    fields = sorted(set(ChatRequest.model_fields) - {"messages", "options"})
    declared = declared_settings(type(provider))
    for key in options:
        if key in fields or key in declared:
            continue
        close = difflib.get_close_matches(key, fields, n=1, cutoff=0.8)
        if close:
            own = f" (or {_OWN_OPTION[close[0]]})" if close[0] in _OWN_OPTION else ""
            raise InvalidInputError(f"-o {key}: unknown option; did you mean -o {close[0]}{own}?")


def check_sampling(provider: Any, model: str | None, options: dict[str, Any]) -> None:
    """A reasoning model (its catalogue entry says ``reasoning``) given ``--temperature`` or
    ``-o top_p``: refused before the call, with what to do on the command line instead."""
    # a value out of range is refused by the request's own check, with its own message
    ranges = {"temperature": 2.0, "top_p": 1.0}
    given = [
        name for name, top in ranges.items() if isinstance(options.get(name), int | float) and 0 <= options[name] <= top
    ]
    # strict_sampling=false (OpenAI's provider setting) sends them anyway: the user chose so
    if not given or getattr(provider, "options", {}).get("strict_sampling", True) is False:
        return
    chosen = model or provider.default_model()
    info = provider.provider_spec.model(chosen)
    if info is None or info.extra.get("reasoning") is not True:
        return
    flags = " and ".join("--temperature" if name == "temperature" else "-o top_p" for name in given)
    raise InvalidInputError(
        f"{chosen} is a reasoning model: it takes no {flags}. Leave {'them' if len(given) > 1 else 'it'} out "
        'and steer how much it thinks with --think or -o thinking \'{"level": "low"}\', or choose a model '
        "that samples, e.g. -m gpt-4.1",
        provider=provider.identifier,
    )


def model_hint(model: str) -> str:
    """``: did you mean -m flash?`` for a model id or alias close to ``model`` (``""`` for a
    known one), else where to look."""
    import difflib

    from llm_core.cli.aliases import all_aliases
    from llm_core.registry import get_registry

    names = {m.id for spec in get_registry().providers() for m in spec.models} | set(all_aliases())
    if model in names:
        return ""
    close = difflib.get_close_matches(model, sorted(names), n=1, cutoff=0.6)
    if close:
        return f": did you mean -m {close[0]}?"
    return " is no model llm-core knows (llm-core models lists them, llm-core aliases the aliases)"
