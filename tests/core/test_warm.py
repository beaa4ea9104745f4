"""core.warm: a server's start builds what its first answers would."""

from __future__ import annotations

from core.inverse.solve import run
from core.language import words
from core.language.answer import build_answer
from core.parse import understand
from core.warm import WARM_QUESTIONS, warm_up


def test_warm_up_parses_every_language_and_answers_each_question() -> None:
    words._bundle.cache_clear()
    warm_up()
    assert words._bundle.cache_info().currsize == len(words.LANGUAGES)
    assert {lang for lang, _ in WARM_QUESTIONS} == set(words.LANGUAGES)


def test_the_warm_up_questions_are_the_common_case_fully_read() -> None:
    """Each warm-up question reads as a whole request (model, precision, card) and answers with a
    verdict, so the start builds the paths a real first question takes, not an error path."""
    for lang, question in WARM_QUESTIONS:
        understood = understand(question)
        request = understood.request
        assert (request.model, request.precision, request.gpus) == ("llama-3.1-8b", "int4", ["rtx4090"])
        assert not [n for n in understood.notes if n.code == "parse_unread"], (lang, understood.notes)
        assert build_answer(run(request), lang).verdict
