"""Bot identity, update delivery settings, commands and chat info."""

from __future__ import annotations

import re
from typing import Any

from aiogram.types import AcceptedGiftTypes, BotCommand, ChatFullInfo

from ..errors import bad_request
from ..params import Params
from ..telegram import FakeTelegram
from ..updates import Webhook
from . import api_method

COMMAND_PATTERN = re.compile(r"[a-z0-9_]{1,32}")
SECRET_TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,256}")
MAX_COMMANDS = 100


@api_method("getMe")
async def get_me(telegram: FakeTelegram, params: Params) -> Any:
    return telegram.bot_user.model_dump(mode="json", exclude_none=True)


@api_method("logOut", "close")
async def log_out(telegram: FakeTelegram, params: Params) -> Any:
    return True


@api_method("getUpdates")
async def get_updates(telegram: FakeTelegram, params: Params) -> Any:
    allowed = params.json("allowed_updates")
    return await telegram.updates.get_updates(
        offset=params.integer("offset"),
        limit=params.integer("limit") or 100,
        timeout=params.number("timeout", 0),
        allowed_updates=allowed if isinstance(allowed, list) else None,
    )


@api_method("setWebhook")
async def set_webhook(telegram: FakeTelegram, params: Params) -> Any:
    url = params.text("url") or ""
    if params.flag("drop_pending_updates"):
        await telegram.updates.drop_pending()
    if not url:
        await telegram.updates.delete_webhook()
        return True
    if not url.startswith(("http://", "https://")):
        raise bad_request("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
    secret = params.text("secret_token")
    if secret is not None and not SECRET_TOKEN_PATTERN.fullmatch(secret):
        raise bad_request("secret token contains unallowed characters")
    allowed = params.json("allowed_updates")
    webhook = Webhook(url, secret, params.integer("max_connections") or 40)
    await telegram.updates.set_webhook(webhook, allowed if isinstance(allowed, list) else None)
    return True


@api_method("deleteWebhook")
async def delete_webhook(telegram: FakeTelegram, params: Params) -> Any:
    if params.flag("drop_pending_updates"):
        await telegram.updates.drop_pending()
    await telegram.updates.delete_webhook()
    return True


@api_method("getWebhookInfo")
async def get_webhook_info(telegram: FakeTelegram, params: Params) -> Any:
    return telegram.updates.webhook_info()


@api_method("setMyCommands")
async def set_my_commands(telegram: FakeTelegram, params: Params) -> Any:
    commands = params.json("commands")
    if not isinstance(commands, list):
        raise bad_request("can't parse commands JSON object")
    if len(commands) > MAX_COMMANDS:
        raise bad_request("too many commands specified")
    for command in commands:
        if not isinstance(command, dict) or not COMMAND_PATTERN.fullmatch(str(command.get("command", ""))):
            raise bad_request("BOT_COMMAND_INVALID")
        if not 1 <= len(str(command.get("description", "")).strip()) <= 256:
            raise bad_request("command description must be non-empty")
    stored = [BotCommand.model_validate(c).model_dump(mode="json", exclude_none=True) for c in commands]
    telegram.commands[telegram.commands_key(params)] = stored
    return True


@api_method("getMyCommands")
async def get_my_commands(telegram: FakeTelegram, params: Params) -> Any:
    return telegram.commands.get(telegram.commands_key(params), [])


@api_method("deleteMyCommands")
async def delete_my_commands(telegram: FakeTelegram, params: Params) -> Any:
    telegram.commands.pop(telegram.commands_key(params), None)
    return True


@api_method("setChatMenuButton")
async def set_chat_menu_button(telegram: FakeTelegram, params: Params) -> Any:
    button = params.json("menu_button") or {"type": "default"}
    if not isinstance(button, dict) or button.get("type") not in ("commands", "web_app", "default"):
        raise bad_request("can't parse menu button")
    url = str((button.get("web_app") or {}).get("url", ""))
    if button["type"] == "web_app" and not url.startswith("https://"):
        raise bad_request("BUTTON_URL_INVALID")
    telegram.menu_buttons[params.integer("chat_id")] = button
    return True


@api_method("getChatMenuButton")
async def get_chat_menu_button(telegram: FakeTelegram, params: Params) -> Any:
    key = params.integer("chat_id")
    return telegram.menu_buttons.get(key) or telegram.menu_buttons.get(None) or {"type": "default"}


@api_method("getChat")
async def get_chat(telegram: FakeTelegram, params: Params) -> Any:
    chat = telegram.chat_of(params).chat
    info = ChatFullInfo(
        id=chat.id,
        type=chat.type,
        first_name=chat.first_name,
        last_name=chat.last_name,
        username=chat.username,
        accent_color_id=0,
        max_reaction_count=11,
        accepted_gift_types=AcceptedGiftTypes(
            unlimited_gifts=True,
            limited_gifts=True,
            unique_gifts=True,
            premium_subscription=True,
            gifts_from_channels=True,
        ),
    )
    return info.model_dump(mode="json", exclude_none=True)
