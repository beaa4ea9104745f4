"""The bot's database: models, engine and migrations, the statements on its rows (users, dialogs, the
inbox), the per-update middleware."""
