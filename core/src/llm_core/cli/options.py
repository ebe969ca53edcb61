"""Options shared by ``prompt`` and ``chat``: ``-m`` (with aliases), ``-p``, ``-s``, ``-o KEY
VALUE``, ``-a FILE_OR_URL``, ``--think``, ``--temperature``, ``--max-tokens``.

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

from llm_core.errors import InvalidInputError
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
        help="an image or PDF to send with the prompt (routes to a provider with vision/documents)",
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


def option_value(text: str) -> Any:
    """``-o`` values: JSON when they parse (numbers, booleans, lists, objects), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def attachment(source: str) -> Any:
    """An :class:`ImagePart` or :class:`DocumentPart` for a file path or an http(s) URL."""
    from llm_core.messages import DocumentPart, ImagePart

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
    return CallSetup(model, list(dict.fromkeys(features)), options, parts)


def user_message(prompt: str, parts: list[Any]) -> Any:
    """The prompt as one user message, with the attachments after its text."""
    from llm_core.messages import ChatMessage

    return ChatMessage.user([prompt, *parts] if parts else prompt)


def choose_provider(provider: str | None, features: list[Feature], model: str | None) -> Any:
    """The provider named by ``-p`` (checked for ``features`` with ``model``), else the one
    ``select`` picks for the features and model. Pass the model with each call too."""
    from llm_core.errors import UnsupportedFeatureError
    from llm_core.registry import get_registry

    registry = get_registry()
    if provider:
        chosen = registry.get(provider)  # the shared instance: the model goes with each call
        for feature in features:
            if not chosen.supports_feature(feature, model):
                raise UnsupportedFeatureError(
                    f"{chosen.name} does not support {feature.value}" + (f" with model {model}" if model else ""),
                    provider=chosen.identifier,
                )
        return chosen
    return registry.select(*features, model=model).provider()
