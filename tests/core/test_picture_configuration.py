"""Property (issue 25): the picture shows the configuration and the breakdown the text leads with —
its breakdown bar adds up to the per-card need of the lead's card count, the figure the text shows
above the breakdown, never a one-card total beside a verdict for four cards."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from core.language.answer import build_answer
from core.language.phrases import format_bytes
from core.layouts.picture import layout
from tests.core.test_answer_units_property import requests, sized


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_the_picture_draws_the_configuration_the_text_leads_with(request: dict[str, Any]) -> None:
    result = sized(request)
    if result is None:
        return
    answer = build_answer(result, "ru")
    drawn = layout(answer)
    assert drawn.total == sum(answer.part_bytes)
    if not answer.cards:
        return
    lead = answer.cards[0]  # the configuration the lead names: the user's card, else the one to rent
    assert lead.as_asked, (answer.lead, [c.config for c in answer.cards])
    assert abs(lead.need_bytes - drawn.total) <= len(answer.part_bytes), (answer.lead, drawn.total_text)
    assert lead.config in answer.lead
    assert format_bytes(drawn.total, "ru") in answer.parts_title and "на карту" in drawn.total_text
    for card in answer.cards[1:]:  # another card count: a bar of its own, against its own line
        assert card.as_asked or any(bar.size == card.need_bytes for bar in drawn.bars)
