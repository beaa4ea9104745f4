"""Every validation answers as Telegram does, so aiogram raises what it raises in production."""

from __future__ import annotations

import pytest
from aiogram import Bot
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramNotFound,
    TelegramRetryAfter,
    TelegramUnauthorizedError,
)
from aiogram.methods import TelegramMethod
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, ReplyParameters

from tgsandbox import Sandbox

CHAT = 77


@pytest.fixture
def chat(sandbox: Sandbox) -> int:
    sandbox.user(id=CHAT)
    return CHAT


def keyboard(*buttons: InlineKeyboardButton) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[list(buttons)])


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("", "Bad Request: message text is empty"),
        ("   <b> </b> ", "Bad Request: message text is empty"),
        ("x" * 4097, "Bad Request: message is too long"),
        ("<b1>x</b1>", 'Bad Request: can\'t parse entities: Unsupported start tag "b1" at byte offset 0'),
        (
            "ok <b>bold",
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            "<b><i>x</b></i>",
            "Bad Request: can't parse entities: Unmatched end tag at byte offset 7, "
            'expected "</i>", found "</b>"',
        ),
        ("1 < 2", 'Bad Request: can\'t parse entities: Unsupported start tag "" at byte offset 2'),
        ("<br>", 'Bad Request: can\'t parse entities: Unsupported start tag "br" at byte offset 0'),
        ("é<p>", 'Bad Request: can\'t parse entities: Unsupported start tag "p" at byte offset 2'),
        (
            "<span>x</span>",
            'Bad Request: can\'t parse entities: Tag "span" must have class "tg-spoiler" at byte offset 0',
        ),
    ],
)
async def test_bad_text_is_refused(bot: Bot, chat: int, text: str, description: str) -> None:
    with pytest.raises(TelegramBadRequest) as raised:
        await bot.send_message(chat, text)
    assert raised.value.message == description


async def test_length_is_counted_after_entity_parsing_in_utf16(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    await bot.send_message(chat, "<b>" + "x" * 4096 + "</b>")  # tags do not count
    await bot.send_message(chat, "&amp;" * 4096)  # one character each
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(chat, "😀" * 2049)  # two UTF-16 units each


async def test_all_supported_html_is_accepted(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    text = (
        "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike>"
        '<del>d</del><span class="tg-spoiler">p</span><tg-spoiler>q</tg-spoiler>'
        '<a href="https://example.com/?a=1&amp;b=2">link</a><code>c</code>'
        '<pre><code class="language-python">x = 1</code></pre><blockquote expandable>quote</blockquote>'
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji> &lt;&gt;&amp;&quot;'
    )
    message = await bot.send_message(chat, text)
    assert message.text is not None and message.text.endswith(' <>&"')
    kinds = [e.type for e in message.entities or []]
    assert kinds == [
        "bold",
        "bold",
        "italic",
        "italic",
        "underline",
        "underline",
        "strikethrough",
        "strikethrough",
        "strikethrough",
        "spoiler",
        "spoiler",
        "text_link",
        "code",
        "pre",
        "expandable_blockquote",
        "custom_emoji",
    ]
    link = (message.entities or [])[11]
    assert link.url == "https://example.com/?a=1&b=2"
    assert (message.entities or [])[13].language == "python"


@pytest.mark.parametrize(
    ("button", "description"),
    [
        (InlineKeyboardButton(text="x", callback_data="d" * 65), "Bad Request: BUTTON_DATA_INVALID"),
        (InlineKeyboardButton(text="x", callback_data="é" * 33), "Bad Request: BUTTON_DATA_INVALID"),
        (InlineKeyboardButton(text="x", url="ftp://example.com"), "is invalid"),
        (InlineKeyboardButton(text="x"), "Text buttons are unallowed in the inline keyboard"),
    ],
)
async def test_bad_buttons_are_refused(
    bot: Bot, chat: int, button: InlineKeyboardButton, description: str
) -> None:
    with pytest.raises(TelegramBadRequest, match=description):
        await bot.send_message(chat, "pick", reply_markup=keyboard(button))


async def test_at_most_100_buttons(bot: Bot, chat: int) -> None:
    rows = [[InlineKeyboardButton(text=str(i), callback_data=str(i))] for i in range(100)]
    await bot.send_message(chat, "ok", reply_markup=InlineKeyboardMarkup(inline_keyboard=rows))
    rows.append([InlineKeyboardButton(text="101", callback_data="101")])
    with pytest.raises(TelegramBadRequest, match="reply markup is too long"):
        await bot.send_message(chat, "too many", reply_markup=InlineKeyboardMarkup(inline_keyboard=rows))


async def test_edit_rules(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    markup = keyboard(InlineKeyboardButton(text="a", callback_data="a"))
    sent = await bot.send_message(chat, "<b>one</b>", reply_markup=markup)
    with pytest.raises(TelegramBadRequest) as raised:
        await bot.edit_message_text(
            "<b>one</b>", chat_id=chat, message_id=sent.message_id, reply_markup=markup
        )
    assert raised.value.message == (
        "Bad Request: message is not modified: specified new message content and reply markup are exactly "
        "the same as a current content and reply markup of the message"
    )
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_reply_markup(chat_id=chat, message_id=sent.message_id, reply_markup=markup)
    with pytest.raises(TelegramBadRequest, match=r"- Bad Request: message to edit not found$"):
        await bot.edit_message_text("x", chat_id=chat, message_id=999)

    edited = await bot.edit_message_text("<i>one</i>", chat_id=chat, message_id=sent.message_id)
    assert isinstance(edited, type(sent)) and edited.reply_markup is None
    assert sandbox.chat(chat)[0].edit_count == 1

    assert await bot.delete_message(chat, sent.message_id)
    assert sandbox.chat(chat)[0].deleted
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("two", chat_id=chat, message_id=sent.message_id)
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await bot.delete_message(chat, sent.message_id)


async def test_unknown_chat(bot: Bot) -> None:
    with pytest.raises(TelegramBadRequest, match=r"- Bad Request: chat not found$"):
        await bot.send_message(31337, "hi")


async def test_unknown_or_answered_callback_query(bot: Bot) -> None:
    with pytest.raises(TelegramBadRequest) as raised:
        await bot.answer_callback_query("123")
    assert raised.value.message == (
        "Bad Request: query is too old and response timeout expired or query ID is invalid"
    )


class UnknownMethod(TelegramMethod[bool]):
    __returning__ = bool
    __api_method__ = "sendTelepathy"


async def test_unknown_method_is_404(bot: Bot, sandbox: Sandbox) -> None:
    with pytest.raises(TelegramNotFound, match="Not Found"):
        await bot(UnknownMethod())
    assert [(r.method, r.error) for r in sandbox.requests] == [("sendTelepathy", "Not Found")]


async def test_wrong_token_is_401(sandbox: Sandbox) -> None:
    stranger = sandbox.make_bot(token="654321:WRONGTOKENWRONGTOKENWRONGTOKEN")
    with pytest.raises(TelegramUnauthorizedError, match="Unauthorized"):
        await stranger.get_me()


async def test_flood_limit_is_429_with_retry_after(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    sandbox.flood_limit(retry_after=7, methods=["sendMessage"], times=1)
    with pytest.raises(TelegramRetryAfter) as raised:
        await bot.send_message(chat, "fast")
    assert raised.value.retry_after == 7
    assert "Too Many Requests: retry after 7" in raised.value.message
    await bot.send_message(chat, "later")  # only the next call was limited
    assert [r.error for r in sandbox.requests_for(chat, "sendMessage")] == [
        "Too Many Requests: retry after 7",
        None,
    ]


async def test_replies_need_an_existing_message(bot: Bot, chat: int) -> None:
    first = await bot.send_message(chat, "first")
    reply = await first.reply("second")
    assert reply.reply_to_message is not None and reply.reply_to_message.text == "first"
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await bot.send_message(chat, "x", reply_parameters=ReplyParameters(message_id=999))
    lenient = ReplyParameters(message_id=999, allow_sending_without_reply=True)
    assert (await bot.send_message(chat, "x", reply_parameters=lenient)).reply_to_message is None
