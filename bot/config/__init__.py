"""Bot configuration from the environment (and an optional ``.env`` file).

Every bad setting stops the start with one line naming the variable (``ConfigError``): values are
checked when read (`load_settings`, in ``settings``), what depends on the command before it runs
(`check_command`: the token, webhook mode, the offers file) and what needs the network right after
(`check_services`: Redis and a server database answer within a few seconds), in ``start_checks``.
This package re-exports what the rest of the bot uses.
"""

from bot.config.settings import ConfigError, Settings, load_settings, problem
from bot.config.start_checks import check_command, check_offers_file, check_purchase_file, check_services

__all__ = [
    "ConfigError",
    "Settings",
    "check_command",
    "check_offers_file",
    "check_purchase_file",
    "check_services",
    "load_settings",
    "problem",
]
