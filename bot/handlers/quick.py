"""Quick answers: free text outside the wizard, parsed by the core and answered directly.

After an answer, text without a model changes that answer (`а в int4?`, `а на двух?`, `on 8 h100?`)
and says what changed; `сравни 4090 48 и h100 для …` (or `сравни с h100` after an answer) puts the
cards side by side. When the model is missing, unknown or ambiguous, the one clarifying question is
the wizard's model step (with the candidates as buttons); once answered, the result follows at once.
"""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import StateFilter

from bot.dialog_steps import Wizard
from bot.free_text import on_free_text
from bot.routing import FeatureRouter


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="quick")
    router.message.register(
        on_free_text, StateFilter(None, Wizard.task, Wizard.result), F.text, ~F.text.startswith("/")
    )
    return router
