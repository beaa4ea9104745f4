"""The settings, read from the environment (and an optional ``.env`` file), each checked when read.

A bad value stops the start with one line naming the variable (``ConfigError``, from `load_settings`);
what a command needs beyond well-formed values is checked in ``bot.config.start_checks``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./data/bot.sqlite3"
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
# The async drivers the bot ships with (pyproject dependencies): backend -> driver.
ASYNC_DATABASES = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}
REDIS_SCHEMES = ("redis", "rediss", "unix")
# Telegram's rule for X-Telegram-Bot-Api-Secret-Token.
WEBHOOK_SECRET_FORMAT = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
# Bitrix24's inbound webhook: https://<portal>/rest/<user id>/<secret code>/
BITRIX24_WEBHOOK_PATH = re.compile(r"^/rest/\d+/[A-Za-z0-9_]+/?$")
# A Bitrix24 lead's user field (where the operator keeps the Telegram id).
BITRIX24_USER_FIELD = re.compile(r"^UF_CRM_[A-Z0-9_]{1,40}$")
HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
MAX_PORT = 65535
MAX_LEAD_MINUTES = 7 * 24 * 60
"""A week: the longest wait LEAD_REMINDER_MINUTES / LEAD_ESCALATE_MINUTES take."""
REDIS_DB_PATH = re.compile(r"(/\d{0,5})?/?")  # redis://host:port, …/ or …/<db number>


class ConfigError(ValueError):
    """Bad configuration; the one-line message names the environment variable at fault."""


def problem(variable: str, message: str) -> ConfigError:
    return ConfigError(f"Invalid configuration: {variable}: {message}")


def _url_problem(value: str, schemes: tuple[str, ...]) -> str | None:
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        return f"must be a URL starting with {' or '.join(s + '://' for s in schemes)}"
    if not parts.netloc:
        return "must name a host after the scheme"
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in 0..65535
    except ValueError:
        return "has an invalid port"
    return None


class Settings(BaseSettings):
    """Every field is read from the upper-cased environment variable of the same name."""

    # env_ignore_empty: `REDIS_URL=` copied from .env.example means "not set", not "empty URL".
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    # SecretStr keeps secrets out of repr(), str() and logs.
    bot_token: SecretStr | None = None
    database_url: str = DEFAULT_DATABASE_URL
    telegram_api_url: str = "https://api.telegram.org"
    redis_url: str | None = None
    # Keys of the dialog state (and the per-user update locks) in Redis start with this.
    redis_key_prefix: str = "fsm"
    offers_file: Path | None = None
    default_language: Literal["ru", "en"] = "ru"
    log_level: str = "INFO"
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    # Webhook mode without WEBHOOK_SECRET lets anyone post updates: only when explicitly told.
    webhook_insecure: bool = False
    web_server_host: str = "0.0.0.0"
    web_server_port: int = 8080
    # GET /metrics on the webhook server (bot.metrics) asks for `Authorization: Bearer <this>` when set.
    metrics_token: SecretStr | None = None
    # The Mini App (bot/webapp): its public https URL (the page, `GET /app` of this bot's server) turns on
    # the menu button and "🎛 Калькулятор" under answers; polling mode serves it on WEBAPP_PORT.
    webapp_url: str | None = None
    webapp_port: int = 8081
    contact_url: str = "https://example.com/contact"
    # Where quote requests (leads) are delivered: a group or supergroup id (-100…), optionally a forum
    # topic in it. Unset: leads are stored and logged, not sent (they stay pending until it is set).
    sales_chat_id: int | None = None
    sales_topic_id: int | None = None
    # Telegram user ids allowed the admin commands (/stats, /export, /link, /offers): "123, 456".
    admin_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    # Minutes a lead's card may wait unclaimed ("Беру") before the sales chat is reminded (once),
    # and before the admins are told (counted from the lead, so longer than the first).
    lead_reminder_minutes: int = 15
    lead_escalate_minutes: int = 60
    # A picture of the answer (the breakdown against the cards) after each result in a private chat.
    answer_pictures: bool = True
    # A Hugging Face id the catalogue lacks is read from the Hub (bot.hf_models): on/off, and where.
    hf_lookup: bool = True
    hf_endpoint: str = "https://huggingface.co"
    # CRM push (bot.crm): each set destination gets every lead, apart from the sales chat.
    crm_webhook_url: str | None = None
    crm_webhook_secret: SecretStr | None = None
    bitrix24_webhook_url: str | None = None
    bitrix24_telegram_field: str | None = None
    amocrm_domain: str | None = None
    amocrm_token: SecretStr | None = None
    # The currency prices are shown in where the offer has a price in it (else the offer's main one);
    # a user's /currency, or Telegram language `kk` (tenge), goes first.
    default_currency: str = Field(default="RUB", pattern=r"^[A-Z]{3}$")
    # Purchase prices for "rent or buy?" (core/data/purchase.example.toml); unset: no comparison.
    purchase_file: Path | None = None

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value.upper()

    @field_validator("webhook_url")
    @classmethod
    def _webhook_is_https(cls, value: str | None) -> str | None:
        if value is not None and _url_problem(value, ("https",)):
            raise ValueError("must be a public https:// URL (Telegram only calls https webhooks)")
        return value

    @field_validator("hf_endpoint")
    @classmethod
    def _hf_endpoint(cls, value: str) -> str:
        if error := _url_problem(value, ("https", "http")):
            raise ValueError(error)
        return value

    @field_validator("telegram_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if error := _url_problem(value, ("https", "http")):
            raise ValueError(error)
        return value

    @field_validator("contact_url")
    @classmethod
    def _contact_url(cls, value: str) -> str:
        # Telegram accepts http(s) and tg:// links on URL buttons; anything else fails every send.
        if error := _url_problem(value, ("https", "http", "tg")):
            raise ValueError(error)
        return value

    @field_validator("crm_webhook_url")
    @classmethod
    def _crm_webhook_url(cls, value: str | None) -> str | None:
        if value is not None and (error := _url_problem(value, ("https", "http"))):
            raise ValueError(error)
        return value

    @field_validator("crm_webhook_secret")
    @classmethod
    def _crm_webhook_secret(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if value is not None and info.data.get("crm_webhook_url") is None:
            raise ValueError("set without CRM_WEBHOOK_URL")
        return value

    @field_validator("bitrix24_webhook_url")
    @classmethod
    def _bitrix24_webhook_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if error := _url_problem(value, ("https", "http")):
            raise ValueError(error)
        if not BITRIX24_WEBHOOK_PATH.match(urlsplit(value).path):
            raise ValueError("must be an inbound webhook URL: https://<portal>/rest/<user id>/<code>/")
        return value.rstrip("/") + "/"

    @field_validator("bitrix24_telegram_field")
    @classmethod
    def _bitrix24_telegram_field(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if info.data.get("bitrix24_webhook_url") is None:
            raise ValueError("set without BITRIX24_WEBHOOK_URL")
        if not BITRIX24_USER_FIELD.match(value):
            raise ValueError("must be a lead's user field code such as UF_CRM_TELEGRAM_ID")
        return value

    @field_validator("amocrm_domain")
    @classmethod
    def _amocrm_domain(cls, value: str | None) -> str | None:
        """The account's domain (example.amocrm.ru), kept as its base URL (https://example.amocrm.ru)."""
        if value is None:
            return None
        if "://" not in value:
            if not HOSTNAME.match(value):
                raise ValueError("must be the account's domain, such as example.amocrm.ru")
            value = f"https://{value}"
        if error := _url_problem(value, ("https", "http")):
            raise ValueError(error)
        return value.rstrip("/")

    @field_validator("amocrm_token")
    @classmethod
    def _amocrm_token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if value is None:
            if info.data.get("amocrm_domain") is not None:
                raise ValueError("not set; AMOCRM_DOMAIN needs a long-lived token")
            return None
        if info.data.get("amocrm_domain") is None:
            raise ValueError("set without AMOCRM_DOMAIN")
        if not value.get_secret_value().strip() or any(c.isspace() for c in value.get_secret_value()):
            raise ValueError("must be the long-lived token, one word")
        return value

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _admin_ids(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        ids = [part for part in re.split(r"[\s,;]+", value) if part]
        if bad := [part for part in ids if not re.fullmatch(r"[1-9]\d{0,19}", part)]:
            raise ValueError(f"must be Telegram user ids (numbers) separated by commas; {bad[0]!r} is not")
        return frozenset(int(part) for part in ids)

    @field_validator("sales_chat_id")
    @classmethod
    def _sales_chat_id(cls, value: int | None) -> int | None:
        if value == 0:
            raise ValueError("must be a Telegram chat id (a group: -100…), not 0")
        return value

    @field_validator("sales_topic_id")
    @classmethod
    def _sales_topic_id(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is None:
            return value
        if value <= 0:
            raise ValueError("must be a forum topic id (message_thread_id), a positive integer")
        if info.data.get("sales_chat_id") is None:
            raise ValueError("needs SALES_CHAT_ID (the forum group the topic is in)")
        return value

    @field_validator("lead_reminder_minutes")
    @classmethod
    def _lead_reminder_minutes(cls, value: int) -> int:
        if not 1 <= value <= MAX_LEAD_MINUTES:
            raise ValueError(f"must be whole minutes from 1 to {MAX_LEAD_MINUTES}")
        return value

    @field_validator("lead_escalate_minutes")
    @classmethod
    def _lead_escalate_minutes(cls, value: int, info: ValidationInfo) -> int:
        if not 1 <= value <= MAX_LEAD_MINUTES:
            raise ValueError(f"must be whole minutes from 1 to {MAX_LEAD_MINUTES}")
        reminder = info.data.get("lead_reminder_minutes")
        if reminder is not None and value <= reminder:
            raise ValueError(
                f"must be more than LEAD_REMINDER_MINUTES ({reminder}): the admins come after the chat"
            )
        return value

    @field_validator("webapp_url")
    @classmethod
    def _webapp_url(cls, value: str | None) -> str | None:
        # Telegram opens Mini Apps over https only (WebAppInfo: "An HTTPS URL of a Web App").
        if value is not None and (error := _url_problem(value, ("https",))):
            raise ValueError(error)
        return value

    @field_validator("web_server_port", "webapp_port")
    @classmethod
    def _web_server_port(cls, value: int) -> int:
        if not 1 <= value <= MAX_PORT:
            raise ValueError(f"must be a TCP port, 1 to {MAX_PORT}")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        usage = "must be a redis://host:port/db URL (or rediss://, unix://)"
        parts = urlsplit(value)
        if parts.scheme not in REDIS_SCHEMES or not (parts.netloc or parts.path):
            raise ValueError(usage)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number in 0..65535
        except ValueError:
            raise ValueError(f"{usage}; the port is not a number from 1 to {MAX_PORT}") from None
        # redis-py reads the database number from the path and silently takes 0 for anything else.
        if parts.scheme != "unix" and not REDIS_DB_PATH.fullmatch(parts.path):
            raise ValueError(f"{usage}; the database after the port is a number, e.g. /0")
        return value

    @field_validator("database_url")
    @classmethod
    def _async_database_url(cls, value: str) -> str:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        supported = " or ".join(f"{b}+{d}://" for b, d in ASYNC_DATABASES.items())
        try:
            url = make_url(value)
        except (ArgumentError, ValueError):
            raise ValueError(f"not a database URL; expected {supported}…") from None
        if ASYNC_DATABASES.get(url.get_backend_name()) != url.get_driver_name():
            raise ValueError(f"unsupported database driver {url.drivername!r}; expected {supported}…")
        if url.port is not None and not 1 <= url.port <= MAX_PORT:
            raise ValueError(f"the port {url.port} is not a TCP port (1 to {MAX_PORT})")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not WEBHOOK_SECRET_FORMAT.match(value.get_secret_value()):
            raise ValueError("1 to 256 characters A-Z, a-z, 0-9, _ and - (Telegram's rule)")
        return value


def load_settings(**overrides: Any) -> Settings:
    """Read the settings; on bad values raise a one-line ConfigError naming each variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc']).upper()}: "
            f"{error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        ]
        raise ConfigError("Invalid configuration: " + "; ".join(problems)) from None
