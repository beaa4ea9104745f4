"""Concurrent updates' Redis pipelines share round trips (bot.redis_batch.SharedPipeline), against a
real Redis: each caller gets its own replies in its own order, or its own error, and a failed round
trip fails every caller in it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from bot.redis_batch import Commands, SharedPipeline


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


class Counted:
    """A Redis client whose pipelines are counted (each one a round trip), as test_speed_paths counts."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.round_trips = 0

    def pipeline(self, **kwargs: Any) -> Any:
        self.round_trips += 1
        return self.redis.pipeline(**kwargs)


def commands(*queued: tuple[object, ...]) -> Commands:
    """``("set", key, value)``, ``("get", key)``, … queued in this order."""
    built = Commands()
    for name, *args in queued:
        getattr(built, str(name))(*args)
    return built


async def test_callers_at_the_same_moment_share_one_round_trip_and_get_their_own_replies(
    redis: Redis, redis_key_prefix: str
) -> None:
    counted = Counted(redis)
    shared = SharedPipeline(counted)
    keys = [f"{redis_key_prefix}:k{i}" for i in range(20)]

    async def caller(i: int) -> list[object]:
        return await shared.execute(commands(("set", keys[i], f"v{i}"), ("get", keys[i]), ("get", keys[0])))

    replies = await asyncio.gather(*(caller(i) for i in range(20)))

    assert counted.round_trips == 1
    for i, reply in enumerate(replies):
        assert reply[0] is True and reply[1] == f"v{i}".encode()
        assert reply[2] == b"v0"  # the first caller's SET went first: callers keep their order


async def test_a_caller_queued_while_a_round_trip_is_out_goes_with_the_next(
    redis: Redis, redis_key_prefix: str
) -> None:
    counted = Counted(redis)
    shared = SharedPipeline(counted)
    key = f"{redis_key_prefix}:counter"
    first = asyncio.create_task(shared.execute(commands(("set", key, "1"))))
    await asyncio.sleep(0)  # the first round trip is on its way
    later = [asyncio.create_task(shared.execute(commands(("get", key)))) for _ in range(5)]

    assert await first == [True]
    assert await asyncio.gather(*later) == [[b"1"]] * 5
    assert counted.round_trips == 2

    assert await shared.execute(commands(("get", key))) == [b"1"]  # the sender starts again
    assert counted.round_trips == 3


async def test_an_error_reply_fails_only_its_caller(redis: Redis, redis_key_prefix: str) -> None:
    counted = Counted(redis)
    shared = SharedPipeline(counted)
    listed, plain = f"{redis_key_prefix}:list", f"{redis_key_prefix}:plain"
    await redis.rpush(listed, "a")

    wrong, right = await asyncio.gather(
        shared.execute(commands(("set", plain, "x"), ("get", listed))),  # GET of a list: WRONGTYPE
        shared.execute(commands(("get", plain), ("rpush", listed, "b"))),
        return_exceptions=True,
    )

    assert isinstance(wrong, ResponseError) and "WRONGTYPE" in str(wrong)
    assert right == [b"x", 2]  # its commands ran, after the failing caller's SET
    assert counted.round_trips == 1


async def test_a_failed_round_trip_fails_every_caller_in_it() -> None:
    dead = Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)  # nothing listens on port 1
    counted = Counted(dead)
    shared = SharedPipeline(counted)
    try:
        calls = (shared.execute(commands(("get", f"k{i}"))) for i in range(3))
        results = await asyncio.gather(*calls, return_exceptions=True)
    finally:
        await dead.aclose()

    assert all(isinstance(result, RedisConnectionError) for result in results)
    assert counted.round_trips == 1


async def test_a_cancelled_caller_does_not_break_the_others(redis: Redis, redis_key_prefix: str) -> None:
    counted = Counted(redis)
    shared = SharedPipeline(counted)
    key = f"{redis_key_prefix}:kept"
    cancelled = asyncio.create_task(shared.execute(commands(("set", key, "mine"))))
    kept = asyncio.create_task(shared.execute(commands(("get", key))))
    await asyncio.sleep(0)
    cancelled.cancel()

    assert await kept == [b"mine"]  # the cancelled caller's command was already on its way
    with pytest.raises(asyncio.CancelledError):
        await cancelled


async def test_nothing_queued_costs_no_round_trip(redis: Redis) -> None:
    counted = Counted(redis)
    shared = SharedPipeline(counted)
    assert await shared.execute(Commands()) == []
    assert counted.round_trips == 0
