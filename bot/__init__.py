"""Telegram bot: a guided GPU-memory dialog over the estimator core."""
