"""Long messages (Telegram allows 4,096 characters) are read in bounded work: the start of a long
text still carries the request, garbage is a `ParseError` rather than a stall, and the number of
fuzzy name comparisons per message has a bound that does not grow with the text."""

from __future__ import annotations

import random

import pytest

from core.catalogue.catalog import Catalog, load_catalog
from core.catalogue.names import MAX_SEARCH_WORDS
from core.errors import ParseError
from core.parse import MAX_TEXT_CHARS, comparison, parse, parse_partial, understand

TELEGRAM_LIMIT = 4096
PROSE = "we would like to run it for our internal support team, load is small for now but may grow. "


def _fill(unit: str, length: int = TELEGRAM_LIMIT) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def _garbage(seed: int) -> str:
    """Name-like words with digits glued on ("llama3 qwen7 zzz2 контекст4"), none a catalogue name."""
    rng = random.Random(seed)
    letters = "бвгджзклмнпрстфхцчшщ"
    words: list[str] = []
    while len(" ".join(words)) < TELEGRAM_LIMIT:
        words.append("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) + str(rng.randint(0, 9)))
    return " ".join(words)[:TELEGRAM_LIMIT]


@pytest.fixture
def fresh_catalog() -> Catalog:
    """A catalogue of its own, so its count of fuzzy comparisons starts at zero."""
    return load_catalog()


def test_the_cap_leaves_room_for_any_request() -> None:
    assert 512 <= MAX_TEXT_CHARS < TELEGRAM_LIMIT


def test_a_long_message_with_the_model_first_reads_the_model_and_says_it_was_cut() -> None:
    text = "llama 3 70b int4 32k контекст 4 пользователя на h100, " + _fill(PROSE, TELEGRAM_LIMIT - 56)
    understood = understand(text)
    request = understood.request
    assert (request.model, request.precision, request.context_length, request.concurrency) == (
        "llama-3-70b",
        "int4",
        32768,
        4,
    )
    assert request.gpus == ["h100-sxm"]
    cut = [n for n in understood.notes if n.code == "parse_text_cut"]
    assert cut and cut[0].params == {"chars": MAX_TEXT_CHARS}


def test_a_short_question_is_read_whole_without_a_note() -> None:
    understood = understand("llama 3 70b int4 на h100")
    assert understood.request.model == "llama-3-70b"
    assert all(n.code != "parse_text_cut" for n in understood.notes)


def test_text_past_the_cap_is_not_read_and_a_word_on_the_edge_is_left_out_whole() -> None:
    text = "llama 3 70b" + " " * (MAX_TEXT_CHARS - len("llama 3 70b") - 2) + "h100 int8 " + _fill(PROSE, 2000)
    request = parse(text)
    assert request.model == "llama-3-70b"
    assert request.gpus is None and request.precision is None


@pytest.mark.parametrize(
    "text",
    [
        "a" * TELEGRAM_LIMIT,
        _garbage(1),
        _garbage(2),
        _fill("!?,.;:()\"'-_/ "),
        _fill(PROSE),
    ],
    ids=["one-word", "garbage-1", "garbage-2", "punctuation", "prose"],
)
def test_garbage_of_telegrams_limit_is_a_parse_error(text: str) -> None:
    assert len(text) == TELEGRAM_LIMIT
    with pytest.raises(ParseError):
        parse(text)
    assert "model" not in parse_partial(text)


@pytest.mark.parametrize("unit", ["h100 ", "2x 4090 48 ", "bs 2 h100 ", "llama 3 70b ", "32k ", "10^12 "])
def test_a_name_or_number_repeated_to_the_limit_is_read_from_its_start(unit: str) -> None:
    """As read from the first `MAX_TEXT_CHARS` characters: the same answer (or error) as that head."""
    text = _fill(unit)
    head = (
        text[:MAX_TEXT_CHARS].rsplit(None, 1)[0]
        if not text[MAX_TEXT_CHARS].isspace()
        else text[:MAX_TEXT_CHARS]
    )

    def outcome(t: str) -> object:
        try:
            return parse(t)
        except ParseError as e:
            return e.code

    assert outcome(text) == outcome(head)
    assert comparison("сравни " + text) == comparison(("сравни " + text)[:MAX_TEXT_CHARS].rsplit(None, 1)[0])


def test_fuzzy_comparisons_per_message_are_bounded_by_the_words_searched(fresh_catalog: Catalog) -> None:
    tokens = {t for names in fresh_catalog._model_tokens.values() for ts in names for t in ts}
    bound = MAX_SEARCH_WORDS * len(tokens)
    for seed in range(3):
        before = fresh_catalog.fuzzy_comparisons
        with pytest.raises(ParseError):
            parse(_garbage(seed), fresh_catalog)
        assert fresh_catalog.fuzzy_comparisons - before <= bound


def test_fuzzy_work_does_not_grow_with_the_message(fresh_catalog: Catalog) -> None:
    """The words searched are the same whether the garbage goes on for 100 or 4,000 more characters."""
    text = _garbage(7)
    head = text[: text.index(" ", 200)]
    with pytest.raises(ParseError):
        parse(head, fresh_catalog)
    short = fresh_catalog.fuzzy_comparisons
    other = load_catalog()
    with pytest.raises(ParseError):
        parse(text, other)
    assert other.fuzzy_comparisons == short  # beyond the first words searched, nothing is compared


def test_a_fuzzy_search_still_finds_a_typo_and_counts_its_comparisons(fresh_catalog: Catalog) -> None:
    found = fresh_catalog.search("lama 3 70b")  # "lama": a typo of "llama"
    assert found and found[0].family.lower().startswith("llama")
    assert fresh_catalog.fuzzy_comparisons > 0
    again = fresh_catalog.fuzzy_comparisons
    fresh_catalog.search("lama 3 70b")
    assert fresh_catalog.fuzzy_comparisons == again  # a word's matches are worked out once per catalogue


def test_search_reads_only_its_first_words(fresh_catalog: Catalog) -> None:
    words = "llama 3 70b " + " ".join(f"zzqx{i}" for i in range(200))
    assert [m.id for m in fresh_catalog.search(words)] == [
        m.id for m in fresh_catalog.search(" ".join(words.split()[:MAX_SEARCH_WORDS]))
    ]
