"""The Bot API traffic of one dialog step, timed: the body of an ``editMessageText``, the reading of
Telegram's answer (a 300-character Russian text with bold, 8 buttons) and of the press's update (the
message it was under, with that keyboard), as this bot does each and as aiogram alone would.
Figures, not a test.

    python bench/bot_api_speed.py [--repeat 5] [--number 2000]

Prints microseconds per call, the best of ``--repeat`` runs of ``--number`` calls each:
- the body: `JsonBodySession.json_body` against aiogram's `prepare_value` of the whole call (what
  ``json_body`` did before only what JSON cannot write went through it) and aiogram's own form;
- the answer: read as aiogram's `Message` (`EditMessageText`) against as the dialog reads it
  (`bot.dialog_calls.EditDialogMessage`: the message's id alone);
- the press: read as aiogram's `Update` against as a `bot.received_updates.ReceivedUpdate` (its
  keyboard met before: the object kept).
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.enums import ParseMode
from aiogram.methods import EditMessageText
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, Update

from bot.bot_session import JsonBodySession
from bot.dialog_calls import EditDialogMessage
from bot.received_updates import ReceivedUpdate

TEXT = "<b>Шаг 3 из 6.</b> Точность весов: " + "в каждом варианте своя память и скорость. " * 7
MARKUP = InlineKeyboardMarkup(
    inline_keyboard=[
        [InlineKeyboardButton(text=f"Вариант {i}", callback_data=f"s:precision:{i}")] for i in range(8)
    ]
)


def answer(method: EditMessageText) -> str:
    """Telegram's answer to the edit: the whole message, its keyboard echoed."""
    message = {
        "message_id": 12, "date": 1_700_000_000, "edit_date": 1_700_000_001,
        "from": {"id": 42, "is_bot": True, "first_name": "Bot", "username": "fit_bot"},
        "chat": {"id": 1001, "type": "private", "first_name": "Ann"},
        "text": TEXT.replace("<b>", "").replace("</b>", ""),
        "entities": [{"type": "bold", "offset": 0, "length": 13}],
        "reply_markup": MARKUP.model_dump(exclude_none=True),
    }  # fmt: skip
    return json.dumps({"ok": True, "result": message}, ensure_ascii=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    session = JsonBodySession()
    bot = Bot("42:TEST", session=session, default=DefaultBotProperties(parse_mode=ParseMode.HTML))
    plain = EditMessageText(chat_id=1001, message_id=12, text=TEXT, reply_markup=MARKUP)
    dialogs = EditDialogMessage(chat_id=1001, message_id=12, text=TEXT, reply_markup=MARKUP)
    content = answer(plain)
    press = {"update_id": 5, "callback_query": {
        "id": "77", "chat_instance": "c", "data": "s:precision:3", "message": json.loads(content)["result"],
        "from": {"id": 1001, "is_bot": False, "first_name": "Ann", "language_code": "ru"},
    }}  # fmt: skip

    def whole_call_prepared() -> Any:
        fields = session.prepare_value(
            plain.model_dump(warnings=False, exclude_none=True), bot=bot, files={}, _dumps_json=False
        )
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()

    timed = {
        "body: json_body": lambda: session.json_body(bot, plain),
        "body: prepare_value of the whole call": whole_call_prepared,
        "body: aiogram's form": lambda: session.build_form_data(bot, plain),
        "answer: as aiogram's Message": lambda: session.check_response(bot, plain, 200, content),
        "answer: as the dialog reads it": lambda: session.check_response(bot, dialogs, 200, content),
        "press: as aiogram's Update": lambda: Update.model_validate(press, context={"bot": bot}),
        "press: as a ReceivedUpdate": lambda: ReceivedUpdate.model_validate(press, context={"bot": bot}),
    }
    for name, call in timed.items():
        best = min(timeit.repeat(call, number=args.number, repeat=args.repeat)) / args.number
        print(f"{name:40} {best * 1e6:7.1f} µs")


if __name__ == "__main__":
    main()
