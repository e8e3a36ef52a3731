"""Rescores in the app: stored rescores in the decision panel and the Replays tab's agreement summary (issue 14).

Real battles on the real simulator; the app is built in-process and its own event handlers are called.
"""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path

import gradio as gr
import pytest

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.rescore import Rescore, panel_line, rescore_many, save_rescore
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.ui.app import build_app
from wolfeclick.ui.library import Library


@pytest.fixture(scope="module")
def rescored(tmp_path_factory) -> tuple[Path, Recording, Rescore]:
    folder = tmp_path_factory.mktemp("whatif-recordings")
    recording = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                        format_id="gen4randombattle", seed=31, max_turns=6))
    (folder / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    [rescore] = asyncio.run(rescore_many([recording], make_policy("random"), "p1"))
    assert isinstance(rescore, Rescore)
    save_rescore(rescore, folder)
    return folder, recording, rescore


def by_elem_id(update: dict) -> dict:
    return {getattr(k, "elem_id", None) or type(k).__name__: v for k, v in update.items()}


def test_every_rescored_decision_panel_says_what_the_policy_would_have_played(rescored) -> None:
    folder, recording, rescore = rescored
    view, lines = Library(folder).annotated(recording.id)
    assert len(rescore.decisions) >= 4
    for decision in rescore.decisions:
        panel = view.html(decision.index, None)
        assert 'class="wc-rescore"' in panel
        assert html.escape(panel_line(decision, "random")) in panel
    for index, turn in enumerate(recording.turns):  # a decision only p2 made (a forced switch) has no note
        if "p1" not in turn.decisions:
            assert 'class="wc-rescore"' not in view.html(index, None)
    assert len(lines) == 1 and lines[0].startswith("random as p1 (heuristic played): agrees ")
    agreed = sum(d.agree for d in rescore.decisions)
    assert f"({agreed}/{len(rescore.decisions)} decisions)" in lines[0]
    assert 'class="wc-rescore"' not in Library(folder).view(recording.id).html(0, None)  # the cached view is untouched


def test_the_replays_tab_shows_the_agreement_summary_and_a_broken_rescore_does_not_stop_it(rescored,
                                                                                          tmp_path: Path) -> None:
    folder, recording, rescore = rescored
    (tmp_path / f"{recording.id}.json").write_bytes((folder / f"{recording.id}.json").read_bytes())
    demo = build_app(Library(tmp_path))
    load = next(f for f in demo.fns.values() if f.api_name == "open_share_link")
    before = by_elem_id(asyncio.run(load.fn(gr.Request(query_params={"replay": recording.id}))))
    assert "wc-rescore-summary" not in before["wc-replays-rescores"]  # (the value model's estimate card is there)
    save_rescore(rescore, tmp_path)
    broken = tmp_path / "rescores" / recording.id / "broken-p2.json"
    broken.write_text("{not json", encoding="utf-8")
    after = by_elem_id(asyncio.run(load.fn(gr.Request(query_params={"replay": recording.id}))))
    summary = after["wc-replays-rescores"]
    assert "random as p1 (heuristic played): agrees" in summary and "1 rescore file could not be read" in summary
    payload = json.loads(after["wc-replays-data"])
    step = rescore.decisions[-1].index
    assert "Asked afterwards" in payload["panels"][step - payload["first"]]


# --------------------------------------------------------------------------------------------------------------
# Take over from here
# --------------------------------------------------------------------------------------------------------------
def takeover(demo, *args) -> list[dict]:
    fn = next(f for f in demo.fns.values() if f.api_name == "takeover_start").fn

    async def run() -> list[dict]:
        return [by_elem_id(u) async for u in fn(*args, request=None, progress=lambda *a, **k: None)]

    return asyncio.run(run())


def test_take_over_plays_on_live_from_the_shown_decision_and_saves_a_branch(tmp_path: Path) -> None:
    from wolfeclick.battle.branch import first_difference
    from wolfeclick.battle.store import load_recording

    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=21))
    (tmp_path / f"{parent.id}.json").write_text(parent.to_json(), encoding="utf-8")
    demo = build_app(Library(tmp_path))
    updates = takeover(demo, "recorded", "maxdamage", "score", 0, parent.id, 5)
    assert updates[0].get("Tabs") is not None  # the page switches to the Live tab
    payloads = [json.loads(u["wc-live-data"]) for u in updates if "wc-live-data" in u]
    assert all(p["viewer"] == "live" for p in payloads) and payloads[-1]["finished"]
    done = updates[-1]["JSON"]
    assert done["done"], updates[-1]
    child = load_recording(tmp_path / f"{done['recording']}.json")
    assert child.source.kind == "branch" and child.source.parent == parent.id and child.source.branch_step == 5
    assert child.players["p2"].policy == "maxdamage" and child.players["p1"].policy == "heuristic"
    assert first_difference(parent.turns, child.turns, len(parent.turns)) == 5
    assert sorted(p.name for p in tmp_path.glob("*.json")) == sorted([f"{parent.id}.json", f"{child.id}.json"])


def test_take_over_of_a_tampered_recording_says_why_in_one_line(tmp_path: Path) -> None:
    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=22, max_turns=8))
    data = json.loads(parent.to_json())
    data["turns"][1]["decisions"]["p1"]["state"] += " (edited)"
    (tmp_path / "edited.json").write_text(json.dumps({**data, "id": "edited"}), encoding="utf-8")
    demo = build_app(Library(tmp_path))
    updates = takeover(demo, "recorded", "recorded", "score", 0, "edited", 4)
    status = [u["Markdown"] for u in updates if "Markdown" in u][-1]
    assert "no longer sees the recorded state" in status and "\n" not in status
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["edited.json"]  # nothing half-made is left
    updates = takeover(demo, "recorded", "recorded", "score", 0, "edited", 999)
    assert "Cannot take over" in [u["Markdown"] for u in updates if "Markdown" in u][-1]


# --------------------------------------------------------------------------------------------------------------
# Compare move by move
# --------------------------------------------------------------------------------------------------------------
def api_fn(demo, name: str):
    return next(f for f in demo.fns.values() if f.api_name == name).fn


def test_side_by_side_marks_where_a_branch_leaves_its_parent(tmp_path: Path) -> None:
    from wolfeclick.battle.branch import branch, first_difference

    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=23))
    child = asyncio.run(branch(parent, 4, {"p2": make_policy("maxdamage")}))
    swapped = asyncio.run(play_battle(make_policy("random"), make_policy("heuristic"), format_id="gen4randombattle",
                                      seed=23, max_turns=3))
    for recording in (parent, child, swapped):
        (tmp_path / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    demo = build_app(Library(tmp_path))
    opened = by_elem_id(asyncio.run(api_fn(demo, "compare_pair_open")(parent.id, child.id)))
    page = opened["wc-pair"]
    parted = first_difference(parent.turns, child.turns, len(parent.turns))
    assert parted is not None and parted >= 4  # at the branch step or at the new policy's first other choice
    assert f'data-divergence="{parted}"' in page and f"First divergence: decision {parted + 1}" in page
    assert f'<div class="wc-pair" data-step="{parted}">' in page and "you are here" in page  # the cursor opens there
    assert page.count('data-pair="a"') == 1 and page.count('data-pair="b"') == 1
    for name in ("a", "b"):  # both battles' HP and reward overlaid
        assert page.count(f'class="wc-ov-{name}-p1"') == 2 and page.count(f'class="wc-ov-{name}-p2"') == 2
    moved = asyncio.run(api_fn(demo, "compare_pair")(parent.id, child.id, 3))  # decision 3: index 2
    earlier = by_elem_id(moved)["wc-pair"]
    slider = next(v for v in moved.values() if not isinstance(v, str))
    assert slider.value == 3 and slider.minimum == 1  # the slider reads the number the texts say
    assert 'data-step="2"' in earlier and "same so far" in earlier and "you are here" not in earlier
    assert earlier.count("diverged") == 0
    same = by_elem_id(asyncio.run(api_fn(demo, "compare_pair_open")(parent.id, parent.id)))["wc-pair"]
    assert "identical, decision by decision" in same
    refused = by_elem_id(asyncio.run(api_fn(demo, "compare_pair_open")(parent.id, swapped.id)))["wc-pair"]
    assert "seats are swapped" in refused and "\n" not in refused


def test_first_divergence_is_the_first_other_move_not_the_other_name(tmp_path: Path) -> None:
    """Issue 27: heuristic-vs-random against maxdamage-vs-random on one seed read "First divergence: decision 1"
    (``|player|p1|heuristic`` ≠ ``|player|p1|maxdamage``) although both played the same moves with the same events
    up to decision 6. Divergence = the first decision whose chosen actions (or, if equal, resulting events) differ,
    names left out."""
    from wolfeclick.battle.branch import first_difference
    from wolfeclick.ui.sidebyside import divergence

    a, b = (asyncio.run(play_battle(make_policy(p1), make_policy("random"), format_id="gen9randombattle", seed=3,
                                    max_turns=12)) for p1 in ("heuristic", "maxdamage"))
    commands = [({s: d.command for s, d in x.decisions.items()}, {s: d.command for s, d in y.decisions.items()})
                for x, y in zip(a.turns, b.turns)]
    first_other = next(i for i, (x, y) in enumerate(commands) if x != y)
    assert first_other > 0 and first_difference(a.turns, b.turns, len(a.turns)) == 0  # names differ from the start
    assert divergence(a, b) == first_other
    for recording in (a, b):
        (tmp_path / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    page = by_elem_id(asyncio.run(api_fn(build_app(Library(tmp_path)), "compare_pair")(a.id, b.id, 2)))["wc-pair"]
    assert f"First divergence: decision {first_other + 1}" in page
    assert page.count("same so far") == 2 and "diverged" not in page  # both columns, at decision 2
    assert divergence(a, a) is None
