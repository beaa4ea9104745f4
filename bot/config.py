"""Bot configuration from the environment (and an optional ``.env`` file)."""

from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./data/bot.sqlite3"
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


class ConfigError(ValueError):
    """Bad configuration; the message names the environment variables at fault."""


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
    web_server_host: str = "0.0.0.0"
    web_server_port: int = 8080
    contact_url: str = "https://example.com/contact"

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value.upper()

    @field_validator("webhook_url")
    @classmethod
    def _webhook_is_https(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("https://"):
            raise ValueError("must be a public https:// URL (Telegram only calls https webhooks)")
        return value


def load_settings(**overrides: Any) -> Settings:
    """Read the settings; on bad values raise ConfigError naming each variable (``WEB_SERVER_PORT``)."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc']).upper()}: {error['msg']}"
            for error in exc.errors()
        ]
        raise ConfigError("Invalid configuration:\n  " + "\n  ".join(problems)) from None
