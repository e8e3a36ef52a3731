"""The human policy ("You"): button labels, answers handed in from outside, refusals, the timer's flagged seeded
fallback, determinism, and two seats at once — all on the real simulator (a seat answered by a test driver)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers import identity
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.game.actions import LegalAction, legal_actions
from wolfeclick.policies.choices import choice_buttons, hp_percent, move_label, switch_label
from wolfeclick.policies.human import (
    Answered,
    HumanAnswerError,
    HumanPolicy,
    HumanSeat,
    Prompt,
    check_timer,
    recent_lines,
)
from wolfeclick.sim.process import SimPool

FORMAT, SEED = "gen4randombattle", 28
"""A short battle for a player who always presses the first button (14 decision points against maxdamage)."""

MOVEDEX = {"thunderbolt": {"type": "Electric", "basePower": 90, "category": "Special"},
           "thunderwave": {"type": "Electric", "basePower": 0, "category": "Status"},
           "seismictoss": {"type": "Fighting", "basePower": 0, "category": "Physical"},
           "hiddenpowergrass": {"type": "Grass", "basePower": 60, "category": "Special"}}
REQUEST = {
    "active": [{"moves": [
        {"move": "Thunderbolt", "id": "thunderbolt", "pp": 12, "maxpp": 24, "disabled": False},
        {"move": "Thunder Wave", "id": "thunderwave", "pp": 32, "maxpp": 32, "disabled": False},
        {"move": "Seismic Toss", "id": "seismictoss", "pp": 0, "maxpp": 32, "disabled": True},
        {"move": "Hidden Power Grass 70", "id": "hiddenpower", "pp": 24, "maxpp": 24, "disabled": False}]}],
    "side": {"pokemon": [
        {"ident": "p1: Raichu", "details": "Raichu, L88, M", "condition": "250/250", "active": True},
        {"ident": "p1: Snorlax", "details": "Snorlax, L80", "condition": "123/300 par", "active": False},
        {"ident": "p1: Gengar", "details": "Gengar, L80", "condition": "0 fnt", "active": False},
        {"ident": "p1: Mew", "details": "Mew, L75", "condition": "1/300", "active": False}]},
}


# --------------------------------------------------------------------------------------------------------------
# Pure: labels, timer, recent lines
# --------------------------------------------------------------------------------------------------------------
def test_buttons_show_moves_with_type_power_and_pp_and_switches_with_hp():
    labels = [(b.command, b.label) for b in choice_buttons(legal_actions(REQUEST), REQUEST, MOVEDEX)]
    assert labels == [
        ("move 1", "Thunderbolt · Electric · 90 BP · 12/24 PP"),
        ("move 2", "Thunder Wave · Electric · status · 32/32 PP"),
        ("move 4", "Hidden Power Grass 70 · Grass · 70 BP · 24/24 PP"),  # type and power from the request name
        ("switch 2", "Switch to Snorlax · 41% HP · PAR"),
        ("switch 4", "Switch to Mew · 1% HP"),  # never 0% while it can still fight
    ]


def test_team_preview_offers_every_slot_as_a_lead():
    request = {"teamPreview": True, "side": REQUEST["side"]}
    buttons = choice_buttons(legal_actions(request), request, MOVEDEX)
    assert [(b.command, b.label) for b in buttons][:2] == [("team 1", "Lead with Raichu (slot 1)"),
                                                          ("team 2", "Lead with Snorlax (slot 2)")]
    assert len(buttons) == 4 and {b.kind for b in buttons} == {"team"}


def test_label_pieces():
    assert move_label("Seismic Toss", "Fighting", 0, "Physical", 5, 32) == "Seismic Toss · Fighting · — BP · 5/32 PP"
    assert move_label("Struggle", None, None, None, None, None) == "Struggle"
    assert switch_label("Mew", None, None) == "Switch to Mew"
    assert [hp_percent(c) for c in ("300/300", "0 fnt", "2/1000", "", "x/y")] == [100, 0, 1, None, None]
    unknown = choice_buttons([LegalAction("move", "Splash", "splash", 1)], {}, {})
    assert unknown[0].label == "Splash"  # no request entry, no dex entry: the name alone


def test_timer_setting_is_checked_in_one_line():
    assert check_timer("") is None and check_timer(None) is None and check_timer(" 30 ") == 30.0
    for bad in ("abc", "0", "-1", "nan", "99999"):
        with pytest.raises(HumanAnswerError) as info:
            check_timer(bad)
        assert "timer" in str(info.value) and "\n" not in str(info.value)


def test_recent_lines_stop_at_the_last_turn():
    lines = ["|start", "|turn|1", "|move|a", "|turn|2", "|move|b", "|turn|3"]
    assert recent_lines(lines, 4) == ["|move|b", "|turn|3"]
    assert recent_lines(lines, 0) == ["|turn|2", "|move|b", "|turn|3"]  # a take-over sees one turn, not all


# --------------------------------------------------------------------------------------------------------------
# On the real simulator
# --------------------------------------------------------------------------------------------------------------
async def _play(choose: Any, *, timer: float | None = None, seed: int = SEED, max_turns: int = 300,
                events: list | None = None, pool: SimPool | None = None, idle: float | None = None) -> Recording:
    """A battle of the seat's person (``choose(seat, prompt)`` answers, or None to let the timer run) vs maxdamage."""
    inbox: asyncio.Queue = asyncio.Queue()
    seat = HumanSeat("p1", timer_s=timer, notify=inbox.put_nowait, idle_s=idle)

    async def person() -> None:
        while True:
            event = await inbox.get()
            if events is not None:
                events.append(event)
            if isinstance(event, Prompt):
                choose(seat, event)

    driver = asyncio.ensure_future(person())
    try:
        return await play_battle(HumanPolicy(seat), make_policy("maxdamage"), format_id=FORMAT, seed=seed,
                                 max_turns=max_turns, pool=pool)
    finally:
        driver.cancel()


def twice(choose: Any, **options: Any) -> list[Recording]:
    """The same battle played twice on one simulator process (a process start is most of a short battle's cost)."""
    async def run() -> list[Recording]:
        pool = SimPool(1)
        await pool.start()
        try:
            return [await _play(choose, pool=pool, **options) for _ in range(2)]
        finally:
            await pool.close()

    return asyncio.run(run())


def first_button(seat: HumanSeat, prompt: Prompt) -> None:
    seat.choose(prompt.key, 0)


def test_a_person_plays_a_whole_battle_and_it_is_recorded_like_any_policy():
    events: list = []
    recording = asyncio.run(_play(first_button, events=events))
    assert recording.result.reason == "win" and recording.result.winner in ("p1", "p2")
    assert recording.players["p1"].policy == "human" and recording.players["p1"].metadata["kind"] == "human"
    Recording.model_validate_json(recording.to_json())
    prompts = [e for e in events if isinstance(e, Prompt)]
    answered = [e for e in events if isinstance(e, Answered)]
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(prompts) == len(answered) == len(mine) > 5
    assert [d.command for d in mine] == [p.buttons[0].command for p in prompts]  # the button's choice was played
    assert not any(d.illegal for d in mine)
    assert all(p.buttons and p.state for p in prompts) and prompts[0].you != "—" and prompts[0].foe != "—"
    assert any("|move|" in line for p in prompts for line in p.lines)  # what happened since the last decision
    assert prompts[0].you[0].isupper() and "%" in prompts[0].you  # e.g. "Dodrio 100%"


def test_same_seed_and_same_answers_give_the_same_recording():
    def last_button(seat: HumanSeat, prompt: Prompt) -> None:
        seat.choose(prompt.key, len(prompt.buttons) - 1)

    once, again = twice(last_button, max_turns=4)
    assert identity(again) == identity(once) and once.result.reason == "turn_limit"


def test_illegal_and_stale_answers_are_refused_in_one_line():
    said: list[str] = []

    def careless(seat: HumanSeat, prompt: Prompt) -> None:
        for attempt in (lambda: seat.answer(prompt.key, "move 9"),
                        lambda: seat.answer("p1-999", prompt.buttons[0].command),
                        lambda: seat.choose(prompt.key, len(prompt.buttons))):
            with pytest.raises(HumanAnswerError) as info:
                attempt()
            said.append(str(info.value))
        seat.answer(prompt.key, prompt.buttons[-1].command)
        with pytest.raises(HumanAnswerError) as info:  # the same decision twice (a double click)
            seat.choose(prompt.key, 0)
        said.append(str(info.value))

    recording = asyncio.run(_play(careless, max_turns=2))
    assert "'move 9' is not a legal choice now; choose one of move 1" in said[0]
    assert "earlier decision" in said[1] and "there is no choice" in said[2] and "no decision is waiting" in said[3]
    assert all("\n" not in line for line in said)
    assert not any(t.decisions["p1"].illegal for t in recording.turns if "p1" in t.decisions)


def test_the_timer_plays_the_seeded_fallback_flagged_and_deterministic():
    events: list = []
    recording, again = twice(lambda seat, prompt: None, timer=0.05, max_turns=3, events=events)
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert mine and all(d.illegal and "timer ran out" in d.illegal_reason for d in mine)
    assert all(d.policy_info == {"timed_out": True, "timer_s": 0.05} for d in mine)
    assert all(d.reward.components["illegal"] == -10.0 for d in mine)  # a fallback, as for every other policy
    assert [e.timed_out for e in events if isinstance(e, Answered)] == [True] * len(mine) * 2
    assert identity(again) == identity(recording)  # the fallback draws from the side's seeded generator


def test_a_person_who_leaves_frees_the_battle_the_seat_closes_after_the_idle_bound():
    """Issue 44 (3): in the public app a tab left open with a seat and no timer must not hold a battle slot for
    ever. After ``idle_s`` with no answer (a timer's fallbacks do not count as answers) the seat closes: that
    decision and every later one send ``default``, and the battle plays to its end without waiting."""
    answered: list[str] = []
    events: list = []

    def twice_then_leave(seat: HumanSeat, prompt: Prompt) -> None:
        if len(answered) < 2:
            answered.append(prompt.key)
            seat.choose(prompt.key, 0)

    recording = asyncio.run(_play(twice_then_leave, idle=0.05, events=events, max_turns=60))
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(answered) == 2 and len(mine) > 3
    assert not any(d.illegal for d in mine[:2])
    left = [e.note for e in events if isinstance(e, Answered) and e.note]
    assert left == ["no answer for 0.05 s: the seat was closed"]
    assert recording.result.reason in ("win", "turn_limit")
    with_timer = asyncio.run(_play(lambda seat, prompt: None, timer=0.02, idle=0.2, events=[], max_turns=60))
    notes = [t.decisions["p1"].policy_info for t in with_timer.turns if "p1" in t.decisions]
    assert notes[0] == {"timed_out": True, "timer_s": 0.02}  # the timer first, then the seat closes
    assert any("seat was closed" in str(n) for n in notes)


def test_a_seat_refuses_to_block_its_own_loop():
    async def run() -> None:
        seat = HumanSeat("p1")
        with pytest.raises(RuntimeError, match="worker thread"):
            seat.ask(None)  # type: ignore[arg-type]

    asyncio.run(run())


def test_the_command_line_refuses_human_in_one_line(tmp_path):
    import subprocess
    import sys

    from wolfeclick.battle.policy_specs import PolicySpecError

    with pytest.raises(PolicySpecError, match="a person choosing with buttons in the app"):
        make_policy("human")
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "record", "--p1", "human", "--p2", "random",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "a person choosing with buttons" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_the_prompt_writes_hp_as_the_narration_beside_it_does():
    """Issue 47 (7): "You: Latios 61%" stood beside "your Latios is down to 62% HP": the prompt rounded poke-env's
    exact fraction, the narration Showdown's spectator percent (rounded up). Both write ``public_hp`` now."""
    from types import SimpleNamespace

    from wolfeclick.game.state import public_hp
    from wolfeclick.policies.human import _mon_text

    for fraction, shown in [(0.6134, "62%"), (0.999, "99%"), (0.004, "1%"), (1.0, "100%"), (0.0, "0%")]:
        mon = SimpleNamespace(species="latios", current_hp_fraction=fraction, status=None)
        assert _mon_text(mon) == f"Latios {shown}" and shown == f"{public_hp(100 * fraction)}%"
