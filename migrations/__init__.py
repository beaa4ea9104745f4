"""Alembic migrations of the bot database (a package so that it ships with the wheel)."""
