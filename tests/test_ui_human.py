""""You" in the app, driven through its own handlers (real simulator, no browser): two sessions' seats never see
each other's clicks, Stop releases a waiting decision, bad choices are one line, and Replays' *Take over from here*
lets a person play on from the shown decision — also of a battle a person played ("as recorded")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from wolfeclick.battle.branch import first_difference
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.store import load_recording
from wolfeclick.ui.app import build_app
from wolfeclick.ui.library import Library
from wolfeclick.ui.tabs.live import human_choose


def by_elem_id(update: dict) -> dict:
    return {(getattr(k, "elem_id", None) or type(k).__name__): v for k, v in update.items()}


def api_fn(demo: Any, name: str) -> Any:
    return next(f for f in demo.fns.values() if f.api_name == name).fn


def session(name: str) -> Any:
    return SimpleNamespace(session_hash=name)


async def play(demo: Any, endpoint: str, args: tuple, request: Any, which: int = 0,
               on_prompt: Any = None) -> tuple[list[dict], list[str]]:
    """Run a live endpoint to its end, answering each prompt through the app's click handler (button ``which``)."""
    ctx = demo.wolfeclick_context
    updates, said = [], []
    async for raw in api_fn(demo, endpoint)(*args, request=request, progress=lambda *a, **k: None):
        update = by_elem_id(raw)
        updates.append(update)
        key = update.get("wc-human-key")
        if key:
            if on_prompt is not None:
                await on_prompt(key)
            count = len(ctx.seats.get(request).pending.buttons)
            said.append(await human_choose(ctx, which % count, key, request))
    return updates, said


def test_two_sessions_play_at_once_and_clicks_answer_only_their_own_seat(tmp_path: Path) -> None:
    demo = build_app(Library(tmp_path))
    ctx = demo.wolfeclick_context
    alice, bob = session("alice"), session("bob")
    refused: list[str] = []

    async def cross_click(key: str) -> None:  # Bob's page sends Alice's key: refused, her decision still waits
        refused.append(await human_choose(ctx, 0, key, bob))

    async def both() -> list:
        return await asyncio.gather(
            play(demo, "live_start", ("human", "maxdamage", "gen4randombattle", "28", "score", 0, ""),
                 alice, 0, cross_click),
            play(demo, "live_start", ("maxdamage", "human", "gen4randombattle", "13", "score", 0, "30"),
                 bob, -1))

    (a_updates, a_said), (b_updates, b_said) = asyncio.run(both())
    assert len(ctx.seats) == 0  # both seats released at the end
    assert all(text.startswith("Sent `") for text in a_said + b_said)
    assert refused and all(text.startswith("⚠") and "\n" not in text for text in refused)
    recordings = {}
    for updates, side in ((a_updates, "p1"), (b_updates, "p2")):
        done = updates[-1]["JSON"]
        assert done["done"] and done["result"]["reason"] in ("win", "tie"), updates[-1]
        recordings[side] = load_recording(tmp_path / f"{done['recording']}.json")
    for updates, other in ((a_updates, "p2"), (b_updates, "p1")):  # issue 27: nothing of the other side's secrets
        records = [u["JSON"] for u in updates if isinstance(u.get("JSON"), dict) and "decisions" in u["JSON"]]
        assert records and all(other not in r["decisions"] for r in records)
        assert all(m["revealed"] or m["active"] or m["fainted"] for r in records for m in r["snapshot"][other]["team"])
        live = [json.loads(u["wc-live-data"]) for u in updates if u.get("wc-live-data")]
        playing = [p for p in live if not p["finished"] and p["decisions"]]
        assert playing and all(f'data-key="state-{other}"' not in panel for p in playing for panel in p["panels"])
        assert f'data-key="state-{other}"' in "".join(live[-1]["panels"])  # the battle over: everything
    alice_rec, bob_rec = recordings["p1"], recordings["p2"]
    assert alice_rec.players["p1"].policy == "human" and bob_rec.players["p2"].policy == "human"
    assert bob_rec.players["p2"].metadata["timer_s"] == 30.0
    for recording, side, which, said in ((alice_rec, "p1", 0, a_said), (bob_rec, "p2", -1, b_said)):
        mine = [t.decisions[side] for t in recording.turns if side in t.decisions]
        assert len(mine) == len(said) > 5
        assert [d.action for d in mine] == [d.legal_actions[which] for d in mine]  # only this page's choices
        assert not any(d.illegal for d in mine)


def test_stop_releases_a_waiting_decision_and_keeps_what_was_played(tmp_path: Path) -> None:
    demo = build_app(Library(tmp_path))
    request = session("carol")
    stopped = []

    async def stop_at_third(key: str) -> None:
        if key.endswith("-3") and not stopped:
            stopped.append(await api_fn(demo, "live_stop")(request=request))

    async def run() -> tuple[list[dict], list[str]]:
        ctx = demo.wolfeclick_context
        updates, said = [], []
        async for raw in api_fn(demo, "live_start")("human", "maxdamage", "gen4randombattle", "28", "score",
                                                     0, "", request=request, progress=lambda *a, **k: None):
            update = by_elem_id(raw)
            updates.append(update)
            key = update.get("wc-human-key")
            if key:
                await stop_at_third(key)
                if not stopped:
                    said.append(await human_choose(ctx, 0, key, request))
        return updates, said

    updates, said = asyncio.run(run())
    assert stopped and stopped[0].startswith("■")
    done = updates[-1]["JSON"]
    assert done["result"]["reason"] == "aborted" and done["result"]["error"] == "stopped by the user"
    recording = load_recording(tmp_path / f"{done['recording']}.json")
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(mine) == 3 and mine[-1].command == "default" and "stopped by the user" in mine[-1].policy_info["note"]


def test_bad_choices_are_one_line(tmp_path: Path) -> None:
    demo = build_app(Library(tmp_path))
    start = api_fn(demo, "live_start")

    async def statuses(*args: Any) -> list[str]:
        return [by_elem_id(u).get("Markdown", "") async for u in start(*args, request=session("dave"),
                                                                       progress=lambda *a, **k: None)]

    both = asyncio.run(statuses("human", "human", "gen4randombattle", "1", "score", 0, ""))
    timer = asyncio.run(statuses("human", "random", "gen4randombattle", "1", "score", 0, "soon"))
    for said, words in ((both, "you can play one side"), (timer, "timer must be a number")):
        assert said[-1].startswith("⚠") and words in said[-1] and "\n" not in said[-1]
    idle = asyncio.run(human_choose(demo.wolfeclick_context, 0, "p1-1", session("erin")))
    assert idle == "⚠ No battle of yours is waiting for a choice."
    assert sorted(tmp_path.glob("*.json")) == []  # nothing was played


def test_take_over_as_you_then_again_as_recorded(tmp_path: Path) -> None:
    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=21, max_turns=10))  # its branches keep its turn limit: short
    (tmp_path / f"{parent.id}.json").write_text(parent.to_json(), encoding="utf-8")
    demo = build_app(Library(tmp_path))
    request = session("frank")
    updates, said = asyncio.run(play(demo, "takeover_start", ("recorded", "human", "score", 0, parent.id, 5,
                                                              ""), request))
    done = updates[-1]["JSON"]
    child = load_recording(tmp_path / f"{done['recording']}.json")
    assert child.source.kind == "branch" and child.source.parent == parent.id and child.source.branch_step == 5
    assert child.players["p2"].policy == "human" and child.players["p1"].policy == "heuristic"
    assert first_difference(parent.turns, child.turns, 5) is None  # the same battle up to the shown decision
    asked = [t for t in child.turns[5:] if "p2" in t.decisions]
    assert len(said) == len(asked) > 0  # the person was asked from the shown decision on, not before
    # a battle a person played, taken over "as recorded" later on: the person plays again, from there only
    step = len(child.turns) - 3
    again, said_again = asyncio.run(play(demo, "takeover_start", ("recorded", "recorded", "score", 0,
                                                                  child.id, step, ""), request))
    grandchild = load_recording(tmp_path / f"{again[-1]['JSON']['recording']}.json")
    assert grandchild.players["p2"].policy == "human" and grandchild.source.parent == child.id
    assert len(said_again) == sum("p2" in t.decisions for t in grandchild.turns[step:])
    assert first_difference(child.turns, grandchild.turns, step) is None
