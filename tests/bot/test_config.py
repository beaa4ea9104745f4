"""Settings come from the environment and .env, with safe defaults and errors that name the variable."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.config import ConfigError, Settings, load_settings

VARIABLES = [
    "BOT_TOKEN", "DATABASE_URL", "TELEGRAM_API_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "OFFERS_FILE",
    "DEFAULT_LANGUAGE", "LOG_LEVEL", "WEBHOOK_URL", "WEBHOOK_SECRET", "WEB_SERVER_HOST", "WEB_SERVER_PORT",
    "CONTACT_URL",
]  # fmt: skip
TOKEN = "123456:AAH-very-secret-token"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No variables from the machine, and a working directory without a .env file."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_env_example_documents_every_variable() -> None:
    example = (Path(__file__).parents[2] / ".env.example").read_text()
    documented = {line.split("=", 1)[0] for line in example.splitlines() if line and not line.startswith("#")}
    assert documented == {field.upper() for field in Settings.model_fields} == set(VARIABLES)


def test_defaults() -> None:
    settings = Settings()
    assert settings.bot_token is None
    assert settings.database_url == "sqlite+aiosqlite:///./data/bot.sqlite3"
    assert settings.telegram_api_url == "https://api.telegram.org"
    assert settings.redis_url is None and settings.offers_file is None
    assert settings.redis_key_prefix == "fsm"  # aiogram's own default
    assert (settings.default_language, settings.log_level) == ("ru", "INFO")
    assert settings.webhook_url is None and settings.webhook_secret is None
    assert (settings.web_server_host, settings.web_server_port) == ("0.0.0.0", 8080)
    assert settings.contact_url == "https://example.com/contact"


def test_every_variable_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {
        "BOT_TOKEN": TOKEN,
        "DATABASE_URL": "postgresql+asyncpg://bot@db/bot",
        "TELEGRAM_API_URL": "http://bot-api:8081",
        "REDIS_URL": "redis://cache:6379/1",
        "REDIS_KEY_PREFIX": "gpufit",
        "OFFERS_FILE": "/etc/bot/offers.toml",
        "DEFAULT_LANGUAGE": "en",
        "LOG_LEVEL": "debug",
        "WEBHOOK_URL": "https://bot.example.com/telegram",
        "WEBHOOK_SECRET": "hook-secret",
        "WEB_SERVER_HOST": "127.0.0.1",
        "WEB_SERVER_PORT": "9000",
        "CONTACT_URL": "https://t.me/sales",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.bot_token is not None and settings.bot_token.get_secret_value() == TOKEN
    assert settings.database_url == "postgresql+asyncpg://bot@db/bot"
    assert settings.telegram_api_url == "http://bot-api:8081"
    assert settings.redis_url == "redis://cache:6379/1" and settings.redis_key_prefix == "gpufit"
    assert settings.offers_file == Path("/etc/bot/offers.toml")
    assert (settings.default_language, settings.log_level) == ("en", "DEBUG")
    assert settings.webhook_url == "https://bot.example.com/telegram"
    assert settings.webhook_secret is not None and settings.webhook_secret.get_secret_value() == "hook-secret"
    assert (settings.web_server_host, settings.web_server_port) == ("127.0.0.1", 9000)
    assert settings.contact_url == "https://t.me/sales"


def test_dotenv_file_is_read_and_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    Path(".env").write_text("BOT_TOKEN=from-file\nDEFAULT_LANGUAGE=en\nREDIS_URL=\nUNRELATED=1\n")
    monkeypatch.setenv("DEFAULT_LANGUAGE", "ru")
    settings = Settings()
    assert settings.bot_token is not None and settings.bot_token.get_secret_value() == "from-file"
    assert settings.default_language == "ru"
    assert settings.redis_url is None  # an empty value copied from .env.example means "not set"


def test_secrets_never_show_in_repr_or_str(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_TOKEN", TOKEN)
    monkeypatch.setenv("WEBHOOK_SECRET", "hook-secret")
    settings = Settings()
    for text in (repr(settings), str(settings), str(settings.model_dump())):
        assert TOKEN not in text and "hook-secret" not in text


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WEB_SERVER_PORT", "eighty"),
        ("DEFAULT_LANGUAGE", "de"),
        ("LOG_LEVEL", "LOUD"),
        ("WEBHOOK_URL", "http://insecure.example.com/hook"),
    ],
)
def test_a_bad_value_is_reported_with_the_variable_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError, match=variable.lower()):
        Settings()
    with pytest.raises(ConfigError, match=f"{variable}: ") as error:
        load_settings()
    assert "Invalid configuration" in str(error.value)


def test_a_bad_value_does_not_echo_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_TOKEN", TOKEN)
    monkeypatch.setenv("WEB_SERVER_PORT", "eighty")
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert TOKEN not in str(error.value)


def test_default_language_is_one_the_bot_speaks() -> None:
    from typing import get_args

    from core.texts import LANGUAGES

    assert set(get_args(Settings.model_fields["default_language"].annotation)) == set(LANGUAGES)
    with pytest.raises(ConfigError, match="DEFAULT_LANGUAGE"):
        load_settings(default_language="de")
