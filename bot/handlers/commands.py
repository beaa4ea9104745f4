"""Commands: /start (with a deep-link source), /new, /help, /lang, /about, /cancel, /currency (the
currency prices are shown in), /ref (the user's personal link) (/prices: `bot.handlers.prices`,
/contact: `bot.handlers.leads`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from html import escape
from pathlib import Path

from aiogram import Bot, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import BotCommand, BotCommandScopeChat, BotCommandScopeDefault, CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram_i18n import I18nContext

from bot import keyboards
from bot.callbacks import LangCB
from bot.context import Ctx
from bot.db import dialogs, users
from bot.db.models import User
from bot.dialog_state import DialogState
from bot.dialog_steps import start_wizard
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog
from core.language.words import LANGUAGES
from core.logs.files import MAX_LOG_FILE_BYTES
from core.sizing.accuracy import about_figures
from core.sizing.accuracy_multimodal import about_figures as multimodal_figures

COMMANDS = ("start", "new", "prices", "contact", "help", "lang", "about", "cancel", "currency", "ref")
log = logging.getLogger(__name__)

# The measured accuracy /about quotes, in percent: read from core/data/accuracy.toml, which
# `python bench/calibration_table.py --write` generates from the calibration cases (never typed here).
ACCURACY: dict[str, int | float] = about_figures()
# Offload to RAM (issue 22): the decode-speed error against the published llama.cpp runs, in percent
# (core/data/offload.toml, tests/core/fixtures/offload_cases.toml: 5 within 15%, the sixth 35%).
OFFLOAD_SPEED_ERROR = {"speed": 15, "worst": 35}
# Speech and vision-language models: their published figures (core/data/multimodal_figures.toml)
MULTIMODAL_ACCURACY: dict[str, int | float] = multimodal_figures()


async def cmd_start(message: Message, ctx: Ctx, deep_link_source: str | None = None) -> None:
    """Greets and asks the task. `t.me/<bot>?start=<source>`: the source is kept for this dialog
    (the users table keeps the first one, see DbSessionMiddleware)."""
    source = deep_link_source or ctx.dialog.state.source
    ctx.dialog.update(source=source)
    await start_wizard(ctx, message=message, greet=True)


async def cmd_new(message: Message, ctx: Ctx) -> None:
    """A new question: nothing said before is changed by a follow-up ("а в int4?") any more."""
    ctx.dialog.update(last_request=None, last_notes=[])
    await start_wizard(ctx, message=message)


async def cmd_cancel(message: Message, ctx: Ctx) -> None:
    """Stops the dialog (recorded as abandoned); its message loses its buttons."""
    await dialogs.abandon_dialogs(ctx.work, ctx.telegram_id, user_id=ctx.user_id)
    state = ctx.dialog.state
    await ctx.state.set_state(None)
    ctx.dialog.set(DialogState(source=state.source))
    if state.msg_id and message.bot is not None:
        with contextlib.suppress(TelegramBadRequest):  # gone, or already without buttons
            await message.bot.edit_message_reply_markup(
                chat_id=message.chat.id, message_id=state.msg_id, reply_markup=None
            )
    await message.answer(ctx.tr("cancelled"))


async def cmd_help(message: Message, ctx: Ctx, bot: Bot) -> None:
    link = await personal_link(bot, ctx.telegram_id)
    await message.answer(ctx.tr("help") + "\n" + ctx.tr("currency-help-ref", link=link))


async def personal_link(bot: Bot, telegram_id: int) -> str:
    """`t.me/<bot>?start=ref_<id>`: whoever arrives through it is counted as brought by this user."""
    me = await bot.me()
    return f"https://t.me/{me.username}?start={users.referral_source(telegram_id)}"


async def cmd_ref(message: Message, ctx: Ctx, bot: Bot) -> None:
    """The user's personal link; how many it brought (no rewards: only counted for /stats)."""
    brought = await ctx.work.read(users.referred_count, ctx.telegram_id)
    link = await personal_link(bot, ctx.telegram_id)
    await message.answer(ctx.tr("currency-ref", link=link, users=brought))


def offered_currencies(catalog: Catalog, default: str) -> list[str]:
    """The currencies some offer is priced in (main or another), the default first."""
    found = {o.currency for o in catalog.offers if o.currency} | {c for o in catalog.offers for c in o.prices}
    return [default, *sorted(found - {default})]


async def cmd_currency(
    message: Message, ctx: Ctx, command: CommandObject, db_user: User | None = None
) -> None:
    """`/currency KZT`: prices in tenge where the operator gives them; `/currency`: the choices."""
    choices = offered_currencies(ctx.catalog, ctx.settings.default_currency)
    asked = (command.args or "").strip().upper()
    if not asked:
        await message.answer(ctx.tr("currency-current", currency=ctx.currency, choices=", ".join(choices)))
        return
    if asked not in choices:
        shown = escape(asked[:12])
        await message.answer(ctx.tr("currency-unknown", currency=shown, choices=", ".join(choices)))
        return
    await ctx.work.write(users.set_currency, ctx.telegram_id, asked)
    if db_user is not None:
        db_user.currency = asked  # the copy memory keeps (bot.db.middleware.KnownUsers), as /lang does
    await message.answer(ctx.tr("currency-set", currency=asked))


def about_messages(tr: Callable[..., str]) -> tuple[str, str]:
    """/about in two messages, each well under Telegram's 4,096 characters: how the estimate is made
    and its accuracy, with offload and speech/vision; then speculative and hybrid models, the launch
    command and the first token, and pasted logs (issue 22)."""
    first = (
        tr("about", **ACCURACY),
        tr("about-offload", **OFFLOAD_SPEED_ERROR),
        tr("about-multimodal", **MULTIMODAL_ACCURACY),
    )
    second = (
        tr("about-spec"),
        tr("about-launch"),
        tr("about-logs", limit_mb=MAX_LOG_FILE_BYTES >> 20),
        tr("about-tts"),
    )
    return "\n".join(first), "\n\n".join(second)


async def cmd_about(message: Message, i18n: I18nContext) -> None:
    for part in about_messages(i18n.get):
        await message.answer(part)


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
    last_set: Path | None = None,
) -> bool:
    """Register the command menu in every language; users of other languages get the default one.

    Each admin's private chat gets its own menu (scope chat, which Telegram prefers to the default):
    the everyday commands and then `admin_commands`. An admin who has not started the bot yet cannot
    get one ("chat not found"): logged, and set at the next start.

    ``last_set``: a file keeping a hash of the menus last set in full (with the bot and its Bot API
    server); when it matches, nothing is sent (a restart with unchanged commands costs no calls).
    Returns whether setMyCommands was called.
    """
    menus: list[tuple[int | None, str | None, list[BotCommand]]] = []
    for lang in (*LANGUAGES, None):
        commands = [
            BotCommand(command=c, description=translate(f"cmd-{c}", lang or default_language))
            for c in COMMANDS
        ]
        menus.append((None, lang, commands))
    if admin_commands:
        for admin_id in sorted(admin_ids):
            for lang in (*LANGUAGES, None):
                commands = [
                    BotCommand(command=c, description=translate(f"cmd-{c}", lang or default_language))
                    for c in (*COMMANDS, *admin_commands)
                ]
                menus.append((admin_id, lang, commands))
    digest = _menus_digest(bot, menus)
    if last_set is not None and _read(last_set) == digest:
        log.debug("command menus unchanged since they were last set")
        return False
    complete = True
    failed_admins: set[int] = set()
    for chat_id, lang, commands in menus:
        if chat_id is None:
            await bot.set_my_commands(commands, scope=BotCommandScopeDefault(), language_code=lang)
            continue
        if chat_id in failed_admins:
            continue
        try:
            scope = BotCommandScopeChat(chat_id=chat_id)
            await bot.set_my_commands(commands, scope=scope, language_code=lang)
        except TelegramBadRequest as e:
            log.warning("no admin command menu for %s (has not started the bot?): %s", chat_id, e.message)
            failed_admins.add(chat_id)
            complete = False
    if last_set is not None and complete:
        _write(last_set, digest)
    return True


def _menus_digest(bot: Bot, menus: Sequence[tuple[int | None, str | None, list[BotCommand]]]) -> str:
    described = {
        "bot": bot.id,
        "api": bot.session.api.base,
        "menus": [[chat_id, lang, [c.model_dump() for c in commands]] for chat_id, lang, commands in menus],
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: Path, digest: str) -> None:
    try:
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(digest + "\n", encoding="ascii")
        temporary.replace(path)
    except OSError as e:  # the menus are set; only the next start sets them again
        log.warning("could not record the command menus in %s: %s", path, e)


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="commands")
    router.message.register(cmd_start, CommandStart())
    router.message.register(cmd_new, Command("new"))
    router.message.register(cmd_cancel, Command("cancel"))
    router.message.register(cmd_help, Command("help"))
    router.message.register(cmd_about, Command("about"))
    router.message.register(cmd_lang, Command("lang"))
    router.message.register(cmd_currency, Command("currency"))
    router.message.register(cmd_ref, Command("ref"))
    router.callback_query.register(on_lang, LangCB.filter())
    return router
