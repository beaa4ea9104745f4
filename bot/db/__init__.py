"""The bot's database: models, engine and migrations, the repository, the per-update middleware."""
