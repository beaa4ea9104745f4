"""The lead pieces without Telegram: intents data, contacts, UTM tags, back-off, the card's escaping."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from bot import leads, outbox
from bot.keyboards import with_utm
from core.catalogue.catalog import default_catalog


def test_the_shipped_intents_load_and_match() -> None:
    intents = leads.load_intents()
    assert set(intents) == {"ru", "en"} and all(intents.values())
    catalog = default_catalog()
    for asked in ("Хочу поговорить с менеджером", "оставить заявку", "сколько стоит?", "хочу арендовать",
                  "contact sales", "talk to a manager", "how much?"):  # fmt: skip
        assert leads.wants_quote(asked, catalog, None), asked
    for question in ("сколько стоит llama 3.1 8b int4", "llama 3.1 70b", "привет", "qwen3 8b on a 4090"):
        assert not leads.wants_quote(question, catalog, None), question


def test_an_intent_phrase_is_its_words_in_a_row_each_a_words_start() -> None:
    """The rule `mentions_intent` follows, word by word, against its one regular expression: every
    phrase's words, inflected, cut short, in other words' company and in other orders."""
    intents = {"en": [["talk", "to", "sal"], ["quote"]], "ru": [["хочу", "арендова"]]}

    def word_by_word(text: str) -> bool:
        words = leads.normalize(text)
        return any(
            all(words[i + k].startswith(part) for k, part in enumerate(phrase))
            for phrases in intents.values()
            for phrase in phrases
            for i in range(len(words) - len(phrase) + 1)
        )

    vocabulary = ["talk", "talking", "to", "tok", "sales", "sa", "quotes", "quo", "unquote", "хочу",
                  "хочется", "арендовать", "аренда", "x-ray", "8b", "Talk", "SALES"]  # fmt: skip
    texts = [" ".join(words) for words in itertools.product(vocabulary, repeat=3)]
    assert sum(word_by_word(text) for text in texts) > 100  # the rule says yes often enough to test
    for text in texts:
        assert leads.mentions_intent(text, intents) == word_by_word(text), text


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("ru = []", "ru must be a non-empty list"),
        ('ru = ["Менеджер"]', "is not 1-4 lower-case words"),
        ('ru = ["one two three four five"]', "is not 1-4 lower-case words"),
        ('en = ["quote", "quote"]', "listed twice"),
        ("en = [", "intents.toml"),
        ("", "no intents"),
    ],
)
def test_a_bad_intents_file_names_the_entry(tmp_path: Path, content: str, error: str) -> None:
    path = tmp_path / "intents.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=error):
        leads.load_intents(path)


@pytest.mark.parametrize(
    ("typed", "contact"),
    [
        ("ann.k@example.com", leads.Contact("email", "ann.k@example.com")),
        ("  +7 (916) 123-45-67 ", leads.Contact("phone", "+79161234567")),
        ("8 916 123 45 67", leads.Contact("phone", "+89161234567")),
        ("ann@", None),
        ("ann@example", None),
        ("<b>@x.y", None),
        ("12345", None),
        ("call me maybe", None),
    ],
)
def test_typed_contacts(typed: str, contact: leads.Contact | None) -> None:
    assert leads.read_contact(typed) == contact


def test_utm_keeps_the_offer_urls_own_parameters() -> None:
    url = with_utm("https://shop.example/rent?id=7&ref=x&utm_source=old#top", campaign=None, content="h1")
    parts = urlsplit(url)
    assert (parts.path, parts.fragment) == ("/rent", "top")
    assert parse_qsl(parts.query) == [
        ("id", "7"), ("ref", "x"), ("utm_source", "telegram"), ("utm_medium", "bot"),
        ("utm_campaign", "direct"), ("utm_content", "h1"),
    ]  # fmt: skip


def test_backoff_doubles_up_to_its_cap() -> None:
    waits = [outbox.backoff_s(n) for n in range(1, 30)]
    assert waits[:3] == [outbox.BACKOFF_BASE_S, 2 * outbox.BACKOFF_BASE_S, 4 * outbox.BACKOFF_BASE_S]
    assert max(waits) == outbox.BACKOFF_MAX_S and waits == sorted(waits)


def test_the_card_escapes_what_users_wrote() -> None:
    def tr(key: str, **args: object) -> str:
        return f"{key}:" + ",".join(f"{k}={v}" for k, v in sorted(args.items()))

    card = leads.card(
        tr, lead_id=3,
        who=leads.Who(telegram_id=42, first_name="<i>Ann</i>", username="a_b", language="ru", source="x&y"),
        contact=leads.Contact("email", "a<b>@example.com"), comment="</b> & <script>",
        summary={}, created_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
    )  # fmt: skip
    assert "<i>" not in card and "&lt;i&gt;Ann&lt;/i&gt;" in card and "x&amp;y" in card
    assert "&lt;/b&gt; &amp; &lt;script&gt;" in card and "a&lt;b&gt;@example.com" in card
    assert '<a href="tg://user?id=42">42</a>' in card and "2026-01-02 03:04 UTC" in card


def test_the_backoff_never_overflows() -> None:
    """The outbox retries for days: thousands of attempts, the wait stays at its cap."""
    assert outbox.backoff_s(100_000) == outbox.BACKOFF_MAX_S


def _bundle_tr(lang: str = "ru") -> leads.Translate:
    from aiogram_i18n.cores import FluentRuntimeCore

    from bot.i18n import LOCALES_DIR

    core = FluentRuntimeCore(path=LOCALES_DIR / "{locale}")
    core.locales = core.find_locales()

    def tr(key: str, **args: object) -> str:
        return core.get(key, lang, **args)

    return tr


def test_a_text_of_any_length_goes_into_a_sentence() -> None:
    """fluent.runtime refuses a placeable over 2,500 characters (issue 19 #1): `render` puts texts
    in after Fluent formatted the sentence, numbers still through it."""
    tr = _bundle_tr()
    comment = "&amp;" * 1000
    with pytest.raises(Exception, match="Too many characters"):
        tr("lead-card-comment", comment=comment)
    assert leads.render(tr, "lead-card-comment", comment=comment) == f"💬 {comment}"
    assert leads.render(tr, "lead-card-title", id=7) == tr("lead-card-title", id=7)
    assert leads.render(tr, "lead-what-contact", contact="\x000\x00 {x}") == "• Связь: \x000\x00 {x}"


@pytest.mark.parametrize("comment", ["<" * 4096, "😀" * 2048, "&" * 1000, "a" * 999])
def test_the_card_fits_a_message_whatever_the_comment(comment: str) -> None:
    card = leads.card(
        _bundle_tr(), lead_id=1,
        who=leads.Who(telegram_id=42, first_name="😀" * 64, username="a", language="ru", source="x" * 64),
        contact=leads.Contact("email", "a" * 64 + "@example.com"), comment=comment,
        summary={}, created_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
    )  # fmt: skip
    assert leads.shown_length(card) <= leads.MESSAGE_LIMIT
    shown = comment if len(comment) <= leads.MAX_COMMENT else comment[: leads.MAX_COMMENT - 1] + leads.CUT
    assert escape(shown, quote=False) in card


def test_notes_fit_the_card_the_latest_kept() -> None:
    card = "📩 <b>#1</b>\n" + "x" * 3000
    notes = [f"➕ note {n} " + "&lt;" * 100 for n in range(20)]
    text = leads.with_notes(card, notes)
    assert leads.shown_length(text) <= leads.MESSAGE_LIMIT
    assert text.startswith(card) and notes[-1] in text and notes[0] not in text
    hidden = sum(note not in text for note in notes)
    assert f"(+{hidden})" in text and 0 < hidden < 20
    assert leads.with_notes(card, []) == card


def test_a_plain_card_needs_no_texts() -> None:
    card = leads.plain_card(5, leads.Contact("phone", "+79161234567"), "<b>" * 2000)
    assert card.startswith("📩 #5\n📞 +79161234567\n💬 &lt;b&gt;") and leads.shown_length(card) < 1100
