"""Answers to callback and inline queries: each query can be answered once, while it is fresh."""

from __future__ import annotations

import time
from typing import Any

from ..errors import QUERY_TOO_OLD, bad_request
from ..params import Params
from ..state import PendingQuery, QueryKind
from ..telegram import FakeTelegram
from . import api_method

MAX_INLINE_RESULTS = 50
MAX_CALLBACK_ANSWER_LENGTH = 200


def _open_query(telegram: FakeTelegram, query_id: str | None, kind: QueryKind) -> PendingQuery:
    query = telegram.queries.get(query_id or "")
    too_old = query is not None and time.monotonic() - query.created_at > telegram.query_ttl
    if query is None or query.kind != kind or query.answered or too_old:
        raise bad_request(QUERY_TOO_OLD)
    return query


@api_method("answerCallbackQuery")
async def answer_callback_query(telegram: FakeTelegram, params: Params) -> Any:
    query = _open_query(telegram, params.text("callback_query_id"), "callback_query")
    text = params.text("text")
    if text is not None and len(text) > MAX_CALLBACK_ANSWER_LENGTH:
        raise bad_request("MESSAGE_TOO_LONG")
    query.answered = True
    query.answer = {
        "text": text,
        "show_alert": params.flag("show_alert"),
        "url": params.text("url"),
        "cache_time": params.integer("cache_time") or 0,
    }
    return True


@api_method("answerInlineQuery")
async def answer_inline_query(telegram: FakeTelegram, params: Params) -> Any:
    query = _open_query(telegram, params.text("inline_query_id"), "inline_query")
    results = params.json("results")
    if not isinstance(results, list):
        raise bad_request("can't parse inline query results JSON object")
    if len(results) > MAX_INLINE_RESULTS:
        raise bad_request("RESULTS_TOO_MUCH")
    ids = [result.get("id") for result in results if isinstance(result, dict)]
    if len(ids) != len(results) or not all(isinstance(i, str) and i for i in ids):
        raise bad_request("RESULT_ID_INVALID")
    if len(set(ids)) != len(ids):
        raise bad_request("RESULT_ID_DUPLICATE")
    query.answered = True
    query.answer = {
        "results": results,
        "cache_time": params.integer("cache_time"),
        "is_personal": params.flag("is_personal"),
        "next_offset": params.text("next_offset"),
    }
    return True
