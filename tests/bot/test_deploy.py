"""docker-compose.yml (the scale-out) read as data everywhere, and checked by `docker compose config`
where Docker's compose is installed: the services, the migrations run once before the replicas, the
bot's variables all settings it reads, healthchecks on /healthz, the proxy over both replicas."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bot.config import Settings

ROOT = Path(__file__).parents[2]
COMPOSE = ROOT / "docker-compose.yml"
CADDYFILE = ROOT / "deploy" / "Caddyfile"
REPLICAS = ("bot-1", "bot-2")
SERVICES = {"postgres", "redis", "migrate", *REPLICAS, "proxy"}
ENVIRONMENT = {  # what `docker compose config` needs set (the `:?` variables)
    "BOT_TOKEN": "123456:AAH-compose-check-token-0123456789",
    "POSTGRES_PASSWORD": "secret",
    "BOT_DOMAIN": "bot.example.com",
    "WEBHOOK_SECRET": "webhook-secret",
}

yaml = pytest.importorskip("yaml")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def test_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == SERVICES
    for name in ("postgres", "redis", *REPLICAS, "proxy"):
        assert services[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    for name in ("migrate", *REPLICAS):
        assert services[name]["build"] == "."


def test_migrations_run_once_before_the_replicas(compose: dict[str, Any]) -> None:
    services = compose["services"]
    migrate = services["migrate"]
    assert migrate["command"] == ["python", "-m", "bot", "migrate"] and migrate["restart"] == "no"
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in REPLICAS:
        replica = services[name]
        assert replica["command"] == ["python", "-m", "bot", "webhook"]
        conditions = {dep: spec["condition"] for dep, spec in replica["depends_on"].items()}
        assert conditions == {
            "migrate": "service_completed_successfully",
            "postgres": "service_healthy",
            "redis": "service_healthy",
        }
        check = " ".join(replica["healthcheck"]["test"])
        assert f"127.0.0.1:{replica['environment']['WEB_SERVER_PORT']}/healthz" in check
    assert set(services["proxy"]["depends_on"]) == set(REPLICAS)


def test_the_bot_variables_are_settings(compose: dict[str, Any]) -> None:
    settings = {name.upper() for name in Settings.model_fields}
    for name in ("migrate", *REPLICAS):
        environment = compose["services"][name]["environment"]
        assert set(environment) <= settings, set(environment) - settings
        for needed in ("BOT_TOKEN", "DATABASE_URL", "REDIS_URL", "WEBHOOK_URL", "WEBHOOK_SECRET"):
            assert needed in environment
        assert environment["DATABASE_URL"].startswith("postgresql+asyncpg://")
        assert environment["REDIS_URL"].startswith("redis://redis:")


def test_the_proxy_routes_the_webhook_path_to_both_replicas(compose: dict[str, Any]) -> None:
    caddyfile = CADDYFILE.read_text()
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in compose["services"]["proxy"]["volumes"]
    environment = compose["services"]["bot-1"]["environment"]
    path = urlsplit(environment["WEBHOOK_URL"].replace("${BOT_DOMAIN:?set BOT_DOMAIN}", "host")).path
    port = environment["WEB_SERVER_PORT"]
    route = re.search(r"handle (\S+) \{\s*reverse_proxy ([^{\n]+)\{", caddyfile)
    assert route is not None, "no reverse_proxy under a path"
    assert route.group(1) == path == "/tg"
    assert route.group(2).split() == [f"{name}:{port}" for name in REPLICAS]
    assert "health_uri /healthz" in caddyfile
    assert "/metrics" not in route.group(0)  # only the webhook path is public


def compose_command() -> list[str] | None:
    """`docker compose` (the plugin) or `docker-compose` (v1), if either is installed."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy and subprocess.run([legacy, "version"], capture_output=True).returncode == 0:
        return [legacy]
    return None


def test_docker_compose_config() -> None:
    command = compose_command()
    if command is None:
        pytest.skip("Docker's compose is not installed")
    environment = {**os.environ, **ENVIRONMENT}
    done = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=environment, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert set(config["services"]) == SERVICES
    replica = config["services"]["bot-2"]["environment"]
    assert replica["WEBHOOK_URL"] == "https://bot.example.com/tg"
    assert replica["DATABASE_URL"] == "postgresql+asyncpg://gpufit:secret@postgres:5432/gpufit"
    missing = {k: v for k, v in environment.items() if k != "BOT_TOKEN"}
    refused = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=missing, cwd=ROOT
    )
    assert refused.returncode != 0 and "BOT_TOKEN" in refused.stderr
