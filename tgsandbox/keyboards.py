"""Reply markup validation (Telegram's limits and error texts) and the buttons a client would show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import bad_request

# Limits as Telegram enforces them (both answer "reply markup is too long"); see tginfo/Telegram-Limits.
MAX_BUTTONS = 100
MAX_REPLY_KEYBOARD_BUTTONS = 300
MAX_CALLBACK_DATA_BYTES = 64
URL_SCHEMES = ("http://", "https://", "tg://")


@dataclass(frozen=True)
class Button:
    """One button as the user sees it; exactly one of ``callback_data`` / ``url`` is set for inline ones."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    inline: bool = True  # False: a reply-keyboard button, pressing it sends its text
    web_app: str | None = None  # a Mini App button: the page's URL (Telegram opens it, no update)


def validate_reply_markup(markup: Any) -> dict[str, Any] | None:
    """Raise Telegram's 400 for a markup Telegram would refuse; return it unchanged otherwise."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        _validate_inline_keyboard(markup["inline_keyboard"])
    elif "keyboard" in markup:
        rows = markup["keyboard"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise bad_request('field "keyboard" must be an Array')
        if sum(len(row) for row in rows) > MAX_REPLY_KEYBOARD_BUTTONS:
            raise bad_request("reply markup is too long")
    return markup


def _validate_inline_keyboard(rows: Any) -> None:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request('field "inline_keyboard" must be an Array')
    if sum(len(row) for row in rows) > MAX_BUTTONS:
        raise bad_request("reply markup is too long")
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                raise bad_request('can\'t parse inline keyboard button: Field "text" must be of type String')
            if "callback_data" in button:
                data = button["callback_data"]
                if not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES:
                    raise bad_request("BUTTON_DATA_INVALID")
            elif "url" in button:
                url = button["url"]
                if not isinstance(url, str) or not url.startswith(URL_SCHEMES) or len(url) <= len("tg://"):
                    raise bad_request(f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL")
            elif not any(key in button for key in _OTHER_INLINE_ACTIONS):
                raise bad_request(
                    "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
                )


_OTHER_INLINE_ACTIONS = (
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "web_app",
    "login_url",
    "callback_game",
    "pay",
    "copy_text",
)


def buttons_of(markup: dict[str, Any] | None) -> list[list[Button]]:
    """Rows of buttons of an inline or reply keyboard (empty for none / remove / force_reply)."""
    if not markup:
        return []
    if "inline_keyboard" in markup:
        return [
            [
                Button(
                    b["text"],
                    callback_data=b.get("callback_data"),
                    url=b.get("url"),
                    web_app=(b.get("web_app") or {}).get("url"),
                )
                for b in row
            ]
            for row in markup["inline_keyboard"]
        ]
    if "keyboard" in markup:
        return [
            [Button(b if isinstance(b, str) else b["text"], inline=False) for b in row]
            for row in markup["keyboard"]
        ]
    return []
