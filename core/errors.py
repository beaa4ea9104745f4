"""Typed errors of the core. Each names the request field (or data row) at fault."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.contract import Assumption


class CoreError(ValueError):
    """Base: a clear message and the field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class CatalogError(CoreError):
    """A data file is invalid; the message names the file and the bad row."""


class UnknownModelError(CoreError):
    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown model {name!r}{hint}", field="model")
        self.name = name
        self.suggestions = suggestions or []


class EstimateError(CoreError):
    """The request is valid JSON but cannot be sized (e.g. LoRA on a diffusion VAE)."""


class ParseError(CoreError):
    """Free text could not be turned into a request.

    `code` is stable for translation: empty, missing_model, ambiguous_model, unknown_model, too_large,
    invalid; chit_chat (thanks, greetings: nothing asked), off_topic (`value`: render, hardware,
    billing — sized elsewhere or a manager's question), unsized_model (`value`: speech — a kind of
    model not sized yet).
    `partial` holds what was understood, so a dialog can ask only for what is missing.
    """

    def __init__(
        self,
        code: str,
        message: str,
        field: str | None = None,
        candidates: list[str] | None = None,
        partial: dict[str, object] | None = None,
        value: str | None = None,
    ) -> None:
        super().__init__(message, field)
        self.code = code
        self.candidates = candidates or []
        self.partial = partial or {}
        self.value = value  # the words at fault, e.g. the unknown model's name as typed
        self.notes: list[Assumption] = []  # the parser's notes on what it did read (`Assumption`s)
