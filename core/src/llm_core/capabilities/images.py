"""Image generation: ``generate_image(prompt)`` and ``generate_image_bytes(prompt)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from llm_core.errors import InvalidInputError, InvalidRequestError
from llm_core.features import Feature
from llm_core.media import check_media, input_image
from llm_core.messages import ImagePart
from llm_core.operation import Hooks, Plan
from llm_core.provider.base import BaseProvider
from llm_core.requests import ImageRequest, build, refuse_surrogates
from llm_core.responses import ImageResponse


class ImageGenerationCapable(BaseProvider):
    """``generate_image_bytes(prompt) -> (bytes, mime_type)``."""

    #: Formats and size accepted for ``input_images`` (checked like vision inputs: the bytes must
    #: be the declared type).
    input_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp")
    max_input_image_size: ClassVar[int] = 20 * 1024 * 1024

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_image(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_image(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse:
        raise NotImplementedError

    def retry_image_request(self, request: ImageRequest, error: InvalidRequestError) -> ImageRequest | None:
        """A changed request to try once after ``error`` rejected ``request`` (default: none)."""
        return None

    def default_image_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.IMAGE in info.features:
                return info.id
        return self.default_model()

    def build_image_request(
        self,
        prompt: str,
        *,
        model: str | None = None,
        input_images: Sequence[ImagePart | tuple[bytes, str]] | None = None,
        **options: Any,
    ) -> ImageRequest:
        if not isinstance(prompt, str):
            raise InvalidInputError(f"prompt must be a string, not {type(prompt).__name__}", provider=self.identifier)
        if not prompt.strip():
            raise InvalidInputError("the image prompt is empty", provider=self.identifier)
        refuse_surrogates(prompt, "prompt", self.identifier)
        chosen = self._model_or(model, self.default_image_model)
        self._require(Feature.IMAGE, chosen)
        images = [input_image(i, self.identifier) for i in input_images or ()]
        for index, image in enumerate(images):
            check_media(
                image.data,
                image.mime_type,
                kind=f"input_images[{index}]",
                formats=self.input_image_formats,
                max_bytes=self.max_input_image_size,
                provider=self.identifier,
            )
        fields = {k: options.pop(k) for k in ("size", "aspect_ratio", "quality", "mime_type") if k in options}
        return build(
            ImageRequest,
            self.identifier,
            prompt=prompt,
            model=chosen,
            input_images=images,
            options=options,
            **fields,
        )

    def image_plan(self, request: ImageRequest, hooks: Hooks) -> Plan:
        """One request, changed once by :meth:`retry_image_request` when the provider refuses it."""
        return Plan(hooks, (request,), revise=self.retry_image_request)
