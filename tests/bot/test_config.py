"""Settings come from the environment and .env, with safe defaults and errors that name the variable.

Every bad setting stops `python -m bot` with one line on stderr naming the variable, exit status 2,
no traceback, before any network call (the subprocess tests below); the token never reaches a log.
"""

import io
import logging
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from pydantic import ValidationError

from bot.config import ConfigError, Settings, check_command, load_settings
from bot.logs import REDACTED, RedactingFilter, secrets_of

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = [
    "BOT_TOKEN", "DATABASE_URL", "TELEGRAM_API_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "OFFERS_FILE",
    "DEFAULT_LANGUAGE", "LOG_LEVEL", "WEBHOOK_URL", "WEBHOOK_SECRET", "WEBHOOK_INSECURE", "WEB_SERVER_HOST",
    "WEB_SERVER_PORT", "CONTACT_URL", "ADMIN_IDS", "SALES_CHAT_ID", "SALES_TOPIC_ID", "ANSWER_PICTURES",
    "HF_LOOKUP", "HF_ENDPOINT", "CRM_WEBHOOK_URL", "CRM_WEBHOOK_SECRET", "BITRIX24_WEBHOOK_URL",
    "BITRIX24_TELEGRAM_FIELD", "AMOCRM_DOMAIN", "AMOCRM_TOKEN", "DEFAULT_CURRENCY", "PURCHASE_FILE",
    "HF_LOOKUP", "HF_ENDPOINT", "LEAD_REMINDER_MINUTES", "LEAD_ESCALATE_MINUTES", "METRICS_TOKEN",
    "WEBAPP_URL", "WEBAPP_PORT",
]  # fmt: skip
TOKEN = "123456:AAH-very-secret-token"
# A token of @BotFather's shape (the secret part is 35 characters there).
GOOD_TOKEN = "7012345678:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"


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
    assert settings.webhook_insecure is False
    assert (settings.web_server_host, settings.web_server_port) == ("0.0.0.0", 8080)
    assert settings.contact_url == "https://example.com/contact"
    assert (settings.lead_reminder_minutes, settings.lead_escalate_minutes) == (15, 60)


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
        "WEBHOOK_INSECURE": "1",
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
    assert settings.webhook_insecure is True
    assert (settings.web_server_host, settings.web_server_port) == ("127.0.0.1", 9000)
    assert settings.contact_url == "https://t.me/sales"


def test_dotenv_file_is_read_and_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    Path(".env").write_text("BOT_TOKEN=from-file\nDEFAULT_LANGUAGE=en\nREDIS_URL=\nUNRELATED=1\n")
    monkeypatch.setenv("DEFAULT_LANGUAGE", "ru")
    settings = Settings()
    assert settings.bot_token is not None and settings.bot_token.get_secret_value() == "from-file"
    assert settings.default_language == "ru"
    assert settings.redis_url is None  # an empty value copied from .env.example means "not set"


def test_admin_ids_are_numbers_separated_by_commas_or_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().admin_ids == frozenset()
    monkeypatch.setenv("ADMIN_IDS", "123456789, 42 7")
    assert Settings().admin_ids == {123456789, 42, 7}


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
        ("WEBHOOK_URL", "bot.example.com/hook"),
        ("TELEGRAM_API_URL", "api.telegram.org"),
        ("TELEGRAM_API_URL", "http://127.0.0.1:99999"),
        ("CONTACT_URL", "example.com/contact"),
        ("CONTACT_URL", "mailto:sales@example.com"),
        ("DATABASE_URL", "sqlite:///./data/bot.sqlite3"),
        ("DATABASE_URL", "postgresql://bot@db/bot"),
        ("DATABASE_URL", "mysql+aiomysql://bot@db/bot"),
        ("DATABASE_URL", "./data/bot.sqlite3"),
        ("REDIS_URL", "localhost:6379"),
        ("WEBHOOK_SECRET", "has spaces in it"),
        ("ADMIN_IDS", "12345, @boss"),
        ("ADMIN_IDS", "-100123"),
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
    assert "\n" not in str(error.value)  # one line


def test_a_bad_value_does_not_echo_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_TOKEN", TOKEN)
    monkeypatch.setenv("WEB_SERVER_PORT", "eighty")
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert TOKEN not in str(error.value)


def test_default_language_is_one_the_bot_speaks() -> None:
    from typing import get_args

    from core.language.words import LANGUAGES

    assert set(get_args(Settings.model_fields["default_language"].annotation)) == set(LANGUAGES)
    with pytest.raises(ConfigError, match="DEFAULT_LANGUAGE"):
        load_settings(default_language="de")


# --- `python -m bot` refuses to start on a bad setting -------------------------------------------


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_bot(cwd: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` in `cwd` (no .env there) with only `env` among the bot's variables."""
    environment = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**environment, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assert_refused(done: subprocess.CompletedProcess[str], variable: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert f"{variable}: " in lines[0]
    assert "Traceback" not in done.stderr + done.stdout
    assert GOOD_TOKEN not in done.stderr + done.stdout
    return lines[0]


def offers_file(tmp_path: Path, body: str | bytes) -> str:
    path = tmp_path / "offers.toml"
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body)
    return str(path)


OFFER = """
[[offer]]
id = "x1"
gpu = "rtx4090-48gb"
count = 1
currency = "RUB"
"""


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BOT_TOKEN", "not-a-token"),
        ("BOT_TOKEN", "123456:short"),
        ("BOT_TOKEN", "abc:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
        ("TELEGRAM_API_URL", "api.telegram.org"),
        ("TELEGRAM_API_URL", "ftp://api.telegram.org"),
        ("WEBHOOK_URL", "http://bot.example.com/hook"),
        ("CONTACT_URL", "example.com/contact"),
        ("DATABASE_URL", "sqlite:///bot.sqlite3"),
        ("DATABASE_URL", "not a url at all"),
        ("REDIS_URL", "127.0.0.1:6379"),
        ("LOG_LEVEL", "LOUD"),
        ("DEFAULT_LANGUAGE", "de"),
        ("WEB_SERVER_PORT", "eighty"),
        ("DEFAULT_CURRENCY", "rubles"),
        ("LEAD_REMINDER_MINUTES", "0"),
        ("LEAD_REMINDER_MINUTES", "soon"),
        ("LEAD_ESCALATE_MINUTES", "15"),  # not after the default reminder
    ],
)
def test_bad_setting_stops_the_start_with_one_line(tmp_path: Path, variable: str, value: str) -> None:
    env = {"BOT_TOKEN": GOOD_TOKEN, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}"}
    done = start_bot(tmp_path, **{**env, variable: value})
    assert_refused(done, variable)
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (None, "file not found"),
        ("[[offer]\nid = ", "not valid TOML"),
        (OFFER + 'price_per_hour = 0\nurl = "https://example.com/x1"\n', "price_per_hour"),
        (OFFER + 'price_per_hour = -5\nurl = "https://example.com/x1"\n', "price_per_hour"),
        (OFFER + 'price_per_hour = inf\nurl = "https://example.com/x1"\n', "price_per_hour: Input"),
        (OFFER + 'price_per_hour = nan\nurl = "https://example.com/x1"\n', "price_per_hour"),
        (OFFER + 'price_per_hour = 1e300\nurl = "https://example.com/x1"\n', "(id='x1'): price_per_hour"),
        (OFFER + 'price_per_hour = 149\nurl = "example.com/x1"\n', "url"),
        (OFFER + 'price_per_hour = 149\nurl = "https://"\n', "host"),
        (OFFER + 'price_per_hour = 149\nurl = "https://example.com/x 1"\n', "row 1 (id='x1'): url: "),
        ((OFFER + 'note = "от 149 руб"\n').encode("cp1251"), "not UTF-8 text"),
    ],
)
def test_bad_offers_file_stops_the_start_with_one_line(
    tmp_path: Path, body: str | bytes | None, expected: str
) -> None:
    path = offers_file(tmp_path, body) if body is not None else str(tmp_path / "missing.toml")
    done = start_bot(tmp_path, BOT_TOKEN=GOOD_TOKEN, OFFERS_FILE=path)
    line = assert_refused(done, "OFFERS_FILE")
    assert expected in line


def test_a_good_offers_file_passes_the_check(tmp_path: Path) -> None:
    from bot.config import check_offers_file

    check_offers_file(Path(offers_file(tmp_path, OFFER + 'price_per_hour = 149\nurl = "https://e.com/x1"\n')))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (None, "file not found"),
        ('[[server]]\nid = "x"\ngpu = "rtx4090-48gb"\ncount = 1\n', "row 1 (id='x'): purchase_price"),
    ],
)
def test_bad_purchase_file_stops_the_start_with_one_line(
    tmp_path: Path, body: str | None, expected: str
) -> None:
    path = tmp_path / "purchase.toml"
    if body is not None:
        path.write_text(body, encoding="utf-8")
    done = start_bot(tmp_path, BOT_TOKEN=GOOD_TOKEN, PURCHASE_FILE=str(path))
    assert expected in assert_refused(done, "PURCHASE_FILE")


def test_redis_unreachable_at_start_stops_it(tmp_path: Path) -> None:
    done = start_bot(
        tmp_path,
        BOT_TOKEN=GOOD_TOKEN,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}",
        REDIS_URL=f"redis://:redis-password@127.0.0.1:{closed_port()}/0",
        timeout=30,
    )
    line = assert_refused(done, "REDIS_URL")
    assert "does not answer" in line and "redis-password" not in done.stderr


def test_webhook_mode_needs_a_secret_unless_told_otherwise(tmp_path: Path) -> None:
    webhook = {"BOT_TOKEN": GOOD_TOKEN, "WEBHOOK_URL": "https://bot.example.com/tg"}
    assert "WEBHOOK_INSECURE=1" in assert_refused(start_bot(tmp_path, "webhook", **webhook), "WEBHOOK_SECRET")
    assert_refused(start_bot(tmp_path, "webhook", BOT_TOKEN=GOOD_TOKEN), "WEBHOOK_URL")
    # Explicitly told, or given a secret: the checks pass (the network is the runner's business).
    told = {"bot_token": GOOD_TOKEN, "webhook_url": "https://bot.example.com/tg"}
    check_command(load_settings(**told, webhook_insecure=True), "webhook")
    check_command(load_settings(**told, webhook_secret="s3cret"), "webhook")
    check_command(load_settings(bot_token=GOOD_TOKEN), "run")  # polling does not need one


def test_the_token_is_checked_only_where_telegram_is_called() -> None:
    bad = load_settings(bot_token="not-a-token")
    for command in ("sandbox", "migrate", "stats"):
        check_command(bad, command)
    with pytest.raises(ConfigError, match="BOT_TOKEN: "):
        check_command(bad, "run")


def test_stats_on_a_missing_database_says_so_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "bot.sqlite3"
    done = start_bot(tmp_path, "stats", DATABASE_URL=f"sqlite+aiosqlite:///{missing}")
    line = assert_refused(done, "DATABASE_URL")
    assert str(missing) in line and "no database" in line
    assert not missing.exists() and not missing.parent.exists()


# --- the token is never printed ---------------------------------------------------------------------


def test_telegram_unreachable_at_start_is_retried_and_the_token_never_printed(tmp_path: Path) -> None:
    """A TELEGRAM_API_URL nobody answers at: the bot waits, one log line per attempt, no traceback and
    no token (issue 19, item 7: it used to stop with a traceback); SIGTERM stops it cleanly."""
    environment = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    environment.update(
        PYTHONPATH=str(ROOT), BOT_TOKEN=GOOD_TOKEN, LOG_LEVEL="DEBUG",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}",
        TELEGRAM_API_URL=f"http://127.0.0.1:{closed_port()}",
    )  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot"], env=environment, cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        while sum("retrying in" in line for line in lines) < 2:  # attempts 1 and 2 (1 s apart)
            line = proc.stdout.readline()
            assert line, "".join(lines[-20:])  # the bot did not exit
            lines.append(line)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    out = "".join(lines) + rest
    assert proc.returncode == 0, out[-2000:]
    retries = [line for line in out.splitlines() if "retrying in" in line]
    assert "does not answer (TelegramNetworkError: " in retries[0] and "(attempt 1)" in retries[0]
    assert "retrying in 2 s (attempt 2)" in retries[1]
    assert "Traceback" not in out
    assert GOOD_TOKEN not in out and GOOD_TOKEN.split(":")[1] not in out


def listening_port() -> tuple[socket.socket, int]:
    """A local port something listens on (the socket: close it after)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("command", "variable", "value", "says"),
    [
        ("run", "OFFERS_FILE", "cp1251", "not UTF-8 text"),
        ("run", "DATABASE_URL", "postgresql+asyncpg://bot@127.0.0.1:99999/bot", "not a TCP port"),
        ("run", "DATABASE_URL", "sqlite-under-a-file", "Not a directory"),
        ("run", "DATABASE_URL", "sqlite-not-a-database", "cannot be opened as an SQLite database"),
        ("migrate", "DATABASE_URL", "sqlite-not-a-database", "cannot be opened as an SQLite database"),
        ("run", "REDIS_URL", "redis://127.0.0.1:port/0", "the port is not a number"),
        ("run", "REDIS_URL", "redis://127.0.0.1:99999/0", "the port is not a number"),
        ("run", "REDIS_URL", "redis://127.0.0.1:6379/fsm", "the database after the port is a number"),
        ("webhook", "WEB_SERVER_PORT", "70000", "must be a TCP port"),
        ("webhook", "WEB_SERVER_PORT", "in-use", "cannot listen on 127.0.0.1:"),
        ("webhook", "WEB_SERVER_HOST", "no-such-host.invalid", "cannot listen on no-such-host.invalid:"),
    ],
)
def test_a_wrong_setting_that_used_to_traceback_is_one_line(
    tmp_path: Path, command: str, variable: str, value: str, says: str
) -> None:
    """Issue 19, item 7: each of these stopped the start with a traceback (exit status 1)."""
    not_a_database = tmp_path / "notes.txt"
    not_a_database.write_text("not SQLite")
    values = {
        "cp1251": offers_file(tmp_path, (OFFER + 'note = "от 149 руб"\n').encode("cp1251")),
        "sqlite-under-a-file": f"sqlite+aiosqlite:///{not_a_database}/bot.sqlite3",
        "sqlite-not-a-database": f"sqlite+aiosqlite:///{not_a_database}",
    }
    env = {
        "BOT_TOKEN": GOOD_TOKEN, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}",
        "TELEGRAM_API_URL": f"http://127.0.0.1:{closed_port()}",  # never reached: refused before
        "WEBHOOK_URL": "https://bot.example.com/tg", "WEBHOOK_SECRET": "s3cret",
        "WEB_SERVER_HOST": "127.0.0.1",
    }  # fmt: skip
    busy, busy_port = listening_port()
    values["in-use"] = str(busy_port)
    try:
        done = start_bot(tmp_path, command, **{**env, variable: values.get(value, value)})
    finally:
        busy.close()
    assert says in assert_refused(done, variable)
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched


@pytest.mark.parametrize(("wrong", "says"), [("database", "does not exist"), ("role", "does not exist")])
def test_a_postgresql_database_that_refuses_is_one_line(tmp_path: Path, wrong: str, says: str) -> None:
    """Issue 19, item 7: asyncpg's own errors (no such database, no such role) went out as a traceback."""
    from tests.conftest import POSTGRES_URL, require_server

    require_server("PostgreSQL", POSTGRES_URL)
    server = urlsplit(POSTGRES_URL)
    user, database = server.username or "postgres", server.path
    if wrong == "database":
        database = f"/no_such_database_{uuid.uuid4().hex[:8]}"
    else:
        user = f"no_such_role_{uuid.uuid4().hex[:8]}"
    url = f"postgresql+asyncpg://{user}@{server.hostname}:{server.port or 5432}{database}"
    for command in ("run", "migrate"):
        done = start_bot(tmp_path, command, BOT_TOKEN=GOOD_TOKEN, DATABASE_URL=url)
        line = assert_refused(done, "DATABASE_URL")
        assert "refuses to connect" in line and says in line


REDACTION_SCRIPT = """
import asyncio, logging, sys
import aiohttp
from bot.logs import setup_logging

setup_logging("INFO", [sys.argv[1]])

async def call(url):
    async with aiohttp.ClientSession() as session:
        await session.post(url)

for token in (sys.argv[1], sys.argv[2]):  # the configured token, and one nobody told the filter
    url = f"http://127.0.0.1:99999/bot{token}/getMe"
    try:
        asyncio.run(call(url))
    except Exception:
        logging.getLogger("aiogram").exception("request to %s failed", url)
print("done")
"""


def test_aiohttp_tracebacks_with_the_token_in_the_url_are_redacted(tmp_path: Path) -> None:
    """aiohttp names the URL, `…/bot<token>/getMe`, in its errors: the filter removes the token from
    the message, its arguments and the traceback."""
    other = "5550001111:AAFotherotherotherotherotherother123"
    done = subprocess.run(
        [sys.executable, "-c", REDACTION_SCRIPT, GOOD_TOKEN, other],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "done" in done.stdout, done.stderr
    assert "Traceback" in done.stderr and "InvalidUrl" in done.stderr  # the error is there...
    assert done.stderr.count(f"bot{REDACTED}") >= 4  # message and traceback, both tokens
    for token in (GOOD_TOKEN, other):
        assert token not in done.stderr and token.split(":")[1] not in done.stderr


def test_redacting_filter_covers_message_args_and_stack() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter([GOOD_TOKEN, "hook-secret-value"]))
    log = logging.getLogger("test.redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("token %s, secret %s", GOOD_TOKEN, "hook-secret-value", stack_info=True)
        try:
            raise RuntimeError(f"https://api.telegram.org/bot{GOOD_TOKEN}/getMe")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    out = stream.getvalue()
    assert GOOD_TOKEN not in out and "hook-secret-value" not in out
    assert f"bot{REDACTED}/getMe" in out and "token <redacted>, secret <redacted>" in out


def test_secrets_of_settings_include_url_passwords() -> None:
    settings = load_settings(
        bot_token=GOOD_TOKEN,
        webhook_secret="hook-secret",
        database_url="postgresql+asyncpg://bot:db-password@db/bot",
        redis_url="redis://:redis-password@cache:6379/0",
    )
    assert set(secrets_of(settings)) == {GOOD_TOKEN, "hook-secret", "db-password", "redis-password"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SALES_CHAT_ID": "sales"}, "SALES_CHAT_ID: Input should be a valid integer"),
        ({"SALES_CHAT_ID": "0"}, "SALES_CHAT_ID: must be a Telegram chat id"),
        ({"SALES_TOPIC_ID": "7"}, "SALES_TOPIC_ID: needs SALES_CHAT_ID"),
        (
            {"SALES_CHAT_ID": "-1001234567890", "SALES_TOPIC_ID": "-3"},
            "SALES_TOPIC_ID: must be a forum topic",
        ),
        ({"CRM_WEBHOOK_URL": "crm.example.com/hook"}, "CRM_WEBHOOK_URL: must be a URL"),
        ({"CRM_WEBHOOK_SECRET": "s"}, "CRM_WEBHOOK_SECRET: set without CRM_WEBHOOK_URL"),
        ({"BITRIX24_WEBHOOK_URL": "https://x.bitrix24.ru/rest/"}, "BITRIX24_WEBHOOK_URL: must be an inbound"),
        ({"BITRIX24_TELEGRAM_FIELD": "UF_CRM_TG"}, "BITRIX24_TELEGRAM_FIELD: set without BITRIX24"),
        (
            {"BITRIX24_WEBHOOK_URL": "https://x.bitrix24.ru/rest/1/abc/", "BITRIX24_TELEGRAM_FIELD": "TG"},
            "BITRIX24_TELEGRAM_FIELD: must be a lead's user field",
        ),
        ({"AMOCRM_DOMAIN": "example.amocrm.ru"}, "AMOCRM_TOKEN: not set"),
        ({"AMOCRM_TOKEN": "t"}, "AMOCRM_TOKEN: set without AMOCRM_DOMAIN"),
        ({"AMOCRM_DOMAIN": "not a domain", "AMOCRM_TOKEN": "t"}, "AMOCRM_DOMAIN: must be the account's"),
        # Telegram opens Mini Apps over https only.
        ({"WEBAPP_URL": "http://calc.example/app"}, "WEBAPP_URL: must be a URL starting with https://"),
        ({"WEBAPP_PORT": "70000"}, "WEBAPP_PORT: must be a TCP port"),
    ],
)
def test_bad_sales_and_crm_settings_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_sales_chat_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (Settings().sales_chat_id, Settings().sales_topic_id) == (None, None)
    monkeypatch.setenv("SALES_CHAT_ID", "-1001234567890")
    monkeypatch.setenv("SALES_TOPIC_ID", "42")
    settings = load_settings()
    assert (settings.sales_chat_id, settings.sales_topic_id) == (-1001234567890, 42)


def test_crm_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITRIX24_WEBHOOK_URL", "https://x.bitrix24.ru/rest/1/abc123")
    monkeypatch.setenv("BITRIX24_TELEGRAM_FIELD", "UF_CRM_TELEGRAM_ID")
    monkeypatch.setenv("AMOCRM_DOMAIN", "example.amocrm.ru")
    monkeypatch.setenv("AMOCRM_TOKEN", "eyJ0eXAi.long.lived")
    settings = load_settings()
    assert settings.bitrix24_webhook_url == "https://x.bitrix24.ru/rest/1/abc123/"
    assert settings.amocrm_domain == "https://example.amocrm.ru"
    assert "eyJ0eXAi" not in repr(settings)
