"""tgsandbox's load-test options: an added Bot API round trip (`Sandbox.latency`) and webhook updates
POSTed over several connections at a time (`webhook_connections`). Waits are for recorded events."""

from __future__ import annotations

import asyncio

from aiohttp import web

from tgsandbox import Sandbox


async def test_latency_holds_calls_until_their_time_or_release() -> None:
    async with Sandbox() as sandbox:
        bot = sandbox.make_bot()
        user = sandbox.user(id=21)
        gate = sandbox.latency(60.0)  # longer than the test: only `release` lets the call through
        call = asyncio.create_task(bot.send_message(user.id, "hello"))
        await sandbox.wait_for(lambda: gate.held == 1, "the call delayed")
        assert not sandbox.sent()
        assert await bot.get_updates(timeout=0) == []  # the long poll is never delayed
        gate.release()
        await call
        assert [r.params["text"] for r in sandbox.sent()] == ["hello"]


async def test_webhook_updates_are_posted_over_several_connections() -> None:
    async with Sandbox(webhook_connections=3) as sandbox:
        bot = sandbox.make_bot()
        arrived: list[int] = []
        release = asyncio.Event()

        async def on_update(request: web.Request) -> web.Response:
            arrived.append((await request.json())["update_id"])
            await release.wait()
            return web.json_response({})

        app = web.Application()
        app.router.add_post("/hook", on_update)
        runner = web.AppRunner(app, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        try:
            await bot.set_webhook(f"http://127.0.0.1:{runner.addresses[0][1]}/hook")
            user = sandbox.user(id=22)
            ids = [await user.post(f"message {n}") for n in range(5)]
            # three POSTs in flight at once, none answered yet
            await sandbox.wait_for(lambda: len(arrived) == 3, "three updates posted")
            assert sorted(arrived) == ids[:3]  # the oldest three, in any order
            release.set()
            await sandbox.wait_for(lambda: sorted(arrived) == ids, "every update posted")
            await sandbox.wait_for(lambda: sandbox.webhook_info()["pending_update_count"] == 0, "all done")
        finally:
            await bot.delete_webhook()
            await runner.cleanup()
