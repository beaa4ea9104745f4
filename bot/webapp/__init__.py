"""The Mini App: a calculator page over the same answer as the chat (issue 24).

`GET /app` serves one static page (`static/`); its API (`routes`) takes a contract `Request` and
answers with a layout of the same `core.language.answer.Answer` the chat shows (`layout`), every call carrying
Telegram's `initData`, checked with the bot token (`auth`). The page's buttons that act in the chat
("Оставить заявку", "В чат") reach the bot as an update of its own (`routes.relay`), so the quote
form, the lead, its card and the outbox are the chat's own.
"""
