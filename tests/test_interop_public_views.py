"""The player's view from a public log (issue 63): battles played here, stripped to their spectator log and imported,
give each side's decisions back as that player saw them — the public part exactly, the own team completed from the
format's set data and marked inferred — and export gives training rows from them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.store import load_recording, save_recording
from wolfeclick.cli import main
from wolfeclick.game.actions import to_id
from wolfeclick.game.prompts import WolfeclickV1
from wolfeclick.interop.export import card_path, read_rows
from wolfeclick.interop.showdown import from_public_log
from wolfeclick.interop.views import FIELDS, own_team, player_views, revealed_team
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sim.setdata import load_book


class Truth:
    """Plays as ``inner`` and keeps, in each decision's info, the true v1 prompt text and the true request."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.spec, self.blocking, self.v1 = inner, inner.spec, False, WolfeclickV1()

    def metadata(self) -> dict[str, Any]:
        return dict(self.inner.metadata())

    def decide(self, observation: Observation) -> Decision:
        decision = self.inner.decide(observation)
        decision.info = {**decision.info, "v1_user": self.v1.build(observation).messages[-1]["content"],
                         "request": observation.request}
        return decision


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A whole gen4 random battle played here (the truth), and the same battle known only from its public log."""
    recording = asyncio.run(play_battle(Truth(make_policy("heuristic")), Truth(make_policy("maxdamage")),
                                        format_id="gen4randombattle", seed=11))
    public = from_public_log(list(recording.log), fmt=recording.format, recording_id="showdownlog-views-11",
                             detail="Showdown protocol log")
    return recording, public


def _history(text: str) -> str:
    """Part C and the active opponent: what the public log alone decides."""
    head, rest = text.split("\n\n## Part B", 1)
    return head.split("### Active Opponent", 1)[1] + rest.split("\n\n## Part C", 1)[1].split("\n\nYou must", 1)[0]


def test_the_inferred_views_keep_what_the_public_log_revealed(played):
    recording, public = played
    book = asyncio.run(load_book(recording.format))
    views = player_views(public, book)
    assert views and all(public.turns[v.index].decisions[v.side].policy_info.get("public_only") for v in views)
    for side in ("p1", "p2"):
        true = [(t.turn, t.decisions[side]) for t in recording.turns if side in t.decisions]
        mine = [v for v in views if v.side == side]
        assert [turn for turn, _ in true] == [v.turn for v in mine]  # one view per decision the side made
        for (_, decision), view in zip(true, mine):
            # the opponent as this side saw it comes from public lines only: byte for byte the true prompt's
            assert _history(view.prompt) == _history(decision.policy_info["v1_user"])
            shown = public.turns[view.index].decisions[side].action
            if shown is not None:  # the action the log shows is the one that was taken, and a legal one
                assert view.action is not None and view.action.kind == decision.action.action
                assert to_id(view.action.name) == to_id(decision.action.choice)
            assert set(view.confidence) == set(FIELDS) and all(0.0 <= c <= 1.0 for c in view.confidence.values())
        # every own Pokémon the log showed: its species, level, the moves it used and the item shown are the truth
        request = true[0][1].policy_info["request"]  # the team as it started (items not yet used or lost)
        entries = {f"{side}: {e['ident'].split(': ', 1)[1]}": e for e in request["side"]["pokemon"]}
        seen = revealed_team(list(public.log), public.format, side, {s: public.players[s].name for s in ("p1", "p2")})
        team = own_team(book, seen, 4)
        assert len(team) >= 1 and [m.key for m in team] == [s.key for s in seen]
        for mon, facts in zip(team, seen):
            entry = entries[mon.key]
            assert mon.details.split(",")[:2] == entry["details"].split(",")[:2]
            true_moves = {m if not m.startswith("hiddenpower") else "hiddenpower" for m in entry["moves"]}
            used = {m if not m.startswith("hiddenpower") else "hiddenpower" for m in facts.revealed.moves}
            assert used <= true_moves and used <= {m if not m.startswith("hiddenpower") else "hiddenpower"
                                                   for m in mon.moves}
            if facts.revealed.item is not None:
                assert facts.revealed.item == to_id(entry["item"]) == mon.set.item
                assert mon.confidence["item"] == 1.0


def test_export_of_a_public_log_gives_inferred_rows_and_exact_only_keeps_the_played_ones(played, tmp_path, capsys):
    recording, _ = played
    folder = tmp_path / "recordings"
    played_path = save_recording(recording, folder)
    log = tmp_path / "battle.log"
    log.write_text("\n".join(recording.log) + "\n", encoding="utf-8")
    assert main(["import", str(log), "--out", str(folder)]) == 0
    imported_path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    imported = load_recording(imported_path)
    assert imported.source.kind == "imported"

    sft = tmp_path / "sft.jsonl"
    assert main(["export", str(imported_path), "--as", "sft", "--out", str(sft)]) == 0
    rows = datasets.load_dataset("json", data_files=str(sft), split="train")
    shown = sum(1 for t in imported.turns for d in t.decisions.values() if d.action is not None)
    assert rows.num_rows == shown > 20  # every decision whose action the log shows
    assert set(rows["inferred"]) == {True} and all(0.0 <= c <= 1.0 for c in rows["confidence"])
    assert all(row["prompt"].startswith("## Part A: Active Field") and "Valid options for this state:" in row["prompt"]
               for row in rows)
    assert all(set(json.loads(row["completion"])) == {"action", "choice"} for row in rows)
    assert f"rows inferred from public logs: {shown}" in card_path(sft).read_text()
    again = tmp_path / "again.jsonl"
    assert main(["export", str(imported_path), "--as", "sft", "--out", str(again)]) == 0
    assert again.read_bytes() == sft.read_bytes()  # the same files, the same bytes

    grpo = tmp_path / "grpo.jsonl"
    assert main(["export", str(imported_path), "--as", "grpo", "--out", str(grpo)]) == 0
    grpo_rows = read_rows(grpo)
    assert len(grpo_rows) == sum(len(t.decisions) for t in imported.turns)
    assert {row["prompt_kind"] for row in grpo_rows} == {"wolfeclick-v1-inferred"}
    assert all(set(row["inferred_fields"]) == set(FIELDS) for row in grpo_rows)

    exact = tmp_path / "exact.jsonl"
    assert main(["export", str(played_path), str(imported_path), "--as", "sft", "--exact-only",
                 "--out", str(exact)]) == 0
    kept = read_rows(exact)
    assert kept and {row["battle_id"] for row in kept} == {recording.id}
    assert {row["inferred"] for row in kept} == {False} and {row["confidence"] for row in kept} == {1.0}
    assert "rows inferred from public logs: 0" in card_path(exact).read_text()
    capsys.readouterr()
    assert main(["export", str(imported_path), "--as", "sft", "--exact-only", "--out", str(exact)]) == 2
    assert "--exact-only" in capsys.readouterr().err


def test_rescore_of_a_public_replay_asks_the_policy_from_the_inferred_state(played, tmp_path, capsys):
    recording, _ = played
    folder = tmp_path / "recordings"
    log = tmp_path / "battle.log"
    log.write_text("\n".join(recording.log) + "\n", encoding="utf-8")
    assert main(["import", str(log), "--out", str(folder)]) == 0
    imported_path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    imported = load_recording(imported_path)
    assert main(["rescore", str(imported_path), "--policy", "heuristic", "--side", "p1"]) == 0
    out = capsys.readouterr().out
    assert "(from an inferred state)" in out
    saved = json.loads(Path(out.split(":")[0]).read_text())
    assert saved["metadata"]["state"] == "from an inferred state"
    assert len(saved["decisions"]) == sum(1 for t in imported.turns if "p1" in t.decisions)
    # the played action is named as the request named it, and a heuristic agrees with itself where it played
    assert any(d["agree"] for d in saved["decisions"])


def test_search_builds_its_worlds_from_an_inferred_state(played):
    """The search policy's world loader (the bridge's ``world``) takes the inferred view like a live one."""
    _, public = played
    book = asyncio.run(load_book(public.format))
    search = make_policy("search?level=1")
    answers = []

    def probe(view, observation):
        if view.side == "p2" and len(answers) < 2 and len(observation.allowed()) > 1:
            answers.append(search.decide(observation))

    player_views(public, book, ["p2"], probe=probe)
    assert len(answers) == 2
    for answer in answers:
        info = answer.info["search"]
        assert info["worlds"] >= 1 and info["rollouts"] >= 2 and answer.action is not None


def test_a_switch_that_goes_on_after_pursuit_is_no_new_decision():
    """Gens 2-4: a switch chosen before Pursuit knocked out the one leaving goes on (``|-hint|Previously chosen
    switches continue…``); the import took it for a replacement asked for, one decision too many."""
    recording = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                        format_id="gen4randombattle", seed=59))
    assert any(line.startswith("|-hint|Previously chosen switches continue") for line in recording.log)
    public = from_public_log(list(recording.log), fmt=recording.format, recording_id="showdownlog-pursuit",
                             detail="Showdown protocol log")
    for side in ("p1", "p2"):
        assert [t.turn for t in public.turns if side in t.decisions] == \
            [t.turn for t in recording.turns if side in t.decisions]


def test_inferred_sft_rows_train_one_step(played, tiny_checkpoint, tmp_path):
    """The rows a public log gives are a dataset TRL's SFTTrainer trains on (the tiny offline checkpoint, on CPU)."""
    import math

    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from wolfeclick.interop.export import export_files

    recording, public = played
    folder = tmp_path / "recordings"
    save_recording(public, folder)
    out = tmp_path / "sft.jsonl"
    stats = export_files([folder], out, kind="sft")
    assert stats.inferred == stats.rows > 0
    rows = datasets.load_dataset("json", data_files=str(out), split="train").select(range(2))
    config = SFTConfig(output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=2, report_to=[],
                       use_cpu=True, save_strategy="no", max_length=None)
    trainer = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_checkpoint), args=config,
                         train_dataset=rows.select_columns(["prompt", "completion"]),
                         processing_class=AutoTokenizer.from_pretrained(tiny_checkpoint))
    result = trainer.train()
    assert result.global_step == 1 and math.isfinite(result.training_loss)


def test_take_over_of_a_public_replay_at_decision_10_plays_to_the_end(played, tmp_path, capsys):
    recording, _ = played
    log = tmp_path / "battle.log"
    log.write_text("\n".join(recording.log) + "\n", encoding="utf-8")
    folder = tmp_path / "recordings"
    assert main(["import", str(log), "--out", str(folder)]) == 0
    imported_path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    imported = load_recording(imported_path)
    assert main(["branch", str(imported_path), "--at", "10", "--p1", "heuristic", "--p2", "random",
                 "--out", str(folder)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith("(from an inferred state)")
    branched = load_recording(Path(line.split(" (")[0]))
    assert branched.source.kind == "branch" and branched.source.parent == imported.id
    assert branched.source.branch_step == 10 and branched.source.detail.startswith("from an inferred state")
    assert {p.metadata["state"] for p in branched.players.values()} == {"from an inferred state"}
    assert branched.result.reason in ("win", "tie") and branched.turns  # played on to the end
    position = sum(len(t.events) for t in imported.turns[:11])  # the public log up to decision 10, then new lines
    assert branched.log[:position] == imported.log[:position]
    assert main(["validate", str(Path(line.split(" (")[0]))]) == 0
