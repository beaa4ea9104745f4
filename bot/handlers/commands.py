"""Commands: /start (with a deep-link source), /new, /help, /lang, /about, /cancel."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence

from aiogram import Bot, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandStart
from aiogram.types import BotCommand, BotCommandScopeChat, BotCommandScopeDefault, CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram_i18n import I18nContext

from bot import keyboards
from bot.callbacks import LangCB
from bot.context import Ctx
from bot.db import repository
from bot.dialog import start_wizard
from bot.dialog_state import DialogState, update
from core.texts import LANGUAGES

COMMANDS = ("start", "new", "contact", "help", "lang", "about", "cancel")
log = logging.getLogger(__name__)

# The measured accuracy /about quotes, in percent: the summary line of `python bench/calibration_table.py`
# (a test fails when they drift apart: update these after a change of the estimator or of its cases).
ACCURACY: dict[str, int | float] = {
    "cases": 27,
    "median": 4.6,
    "rules": 22.8,
    "stated_cases": 14,
    "stated_median": 2.6,
    "stated_rules": 35.4,
}


async def cmd_start(message: Message, ctx: Ctx, deep_link_source: str | None = None) -> None:
    """Greets and asks the task. `t.me/<bot>?start=<source>`: the source is kept for this dialog
    (the users table keeps the first one, see DbSessionMiddleware)."""
    source = deep_link_source or (await DialogState.load(ctx.state)).source
    await update(ctx.state, source=source)
    await start_wizard(ctx, message=message, greet=True)


async def cmd_new(message: Message, ctx: Ctx) -> None:
    await start_wizard(ctx, message=message)


async def cmd_cancel(message: Message, ctx: Ctx) -> None:
    """Stops the dialog (recorded as abandoned); its message loses its buttons."""
    await repository.abandon_dialogs(ctx.db, ctx.telegram_id)
    state = await DialogState.load(ctx.state)
    await ctx.state.clear()
    await DialogState(source=state.source).save(ctx.state)
    if state.msg_id and message.bot is not None:
        with contextlib.suppress(TelegramBadRequest):  # gone, or already without buttons
            await message.bot.edit_message_reply_markup(
                chat_id=message.chat.id, message_id=state.msg_id, reply_markup=None
            )
    await message.answer(ctx.tr("cancelled"))


async def cmd_help(message: Message, i18n: I18nContext) -> None:
    await message.answer(i18n.get("help"))


async def cmd_about(message: Message, i18n: I18nContext) -> None:
    await message.answer(i18n.get("about", **ACCURACY))


async def cmd_lang(message: Message, i18n: I18nContext) -> None:
    await message.answer(i18n.get("lang-choose"), reply_markup=keyboards.language_keyboard(i18n.get))


async def on_lang(
    query: CallbackQuery, callback_data: LangCB, i18n: I18nContext, callback_answer: CallbackAnswer
) -> None:
    if callback_data.lang not in LANGUAGES:
        callback_answer.text = i18n.get("stale-button")
        return
    await i18n.set_locale(callback_data.lang)
    callback_answer.text = i18n.get("lang-set")
    if isinstance(query.message, Message):
        await query.message.edit_text(i18n.get("lang-set"))


async def set_commands(
    bot: Bot,
    translate: Callable[[str, str], str],
    default_language: str,
    admin_ids: Iterable[int] = (),
    admin_commands: Sequence[str] = (),
) -> None:
    """Register the command menu in every language; users of other languages get the default one.

    Each admin's private chat gets its own menu (scope chat, which Telegram prefers to the default):
    the everyday commands and then `admin_commands`. An admin who has not started the bot yet cannot
    get one ("chat not found"): logged, and set at the next start.
    """
    for lang in (*LANGUAGES, None):
        commands = [
            BotCommand(command=c, description=translate(f"cmd-{c}", lang or default_language))
            for c in COMMANDS
        ]
        await bot.set_my_commands(commands, scope=BotCommandScopeDefault(), language_code=lang)
    if not admin_commands:
        return
    for admin_id in sorted(admin_ids):
        try:
            for lang in (*LANGUAGES, None):
                commands = [
                    BotCommand(command=c, description=translate(f"cmd-{c}", lang or default_language))
                    for c in (*COMMANDS, *admin_commands)
                ]
                scope = BotCommandScopeChat(chat_id=admin_id)
                await bot.set_my_commands(commands, scope=scope, language_code=lang)
        except TelegramBadRequest as e:
            log.warning("no admin command menu for %s (has not started the bot?): %s", admin_id, e.message)


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = Router(name="commands")
    router.message.register(cmd_start, CommandStart())
    router.message.register(cmd_new, Command("new"))
    router.message.register(cmd_cancel, Command("cancel"))
    router.message.register(cmd_help, Command("help"))
    router.message.register(cmd_about, Command("about"))
    router.message.register(cmd_lang, Command("lang"))
    router.callback_query.register(on_lang, LangCB.filter())
    return router
