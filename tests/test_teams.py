"""Team formats on the real simulator: teams validated by Showdown's own validator, team preview as a decision point,
recordings that keep both teams and re-simulate, tournaments whose pairs swap seats and teams."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.battle.teams import Team, TeamDeal, TeamError, TeamSources, prepare_deal, read_team_file, validate_team
from wolfeclick.game.actions import legal_actions
from wolfeclick.sim.process import SimProcess
from wolfeclick.ui.battle_panels import BattleMeta, BattleView

TEAMS = Path(__file__).parent / "data" / "teams"
OU = sorted((TEAMS / "gen9ou").glob("*.txt"))
ILLEGAL = TEAMS / "illegal" / "gen9ou-uber-and-spore.txt"


async def _with_process(work):  # type: ignore[no-untyped-def]
    process = SimProcess()
    await process.start()
    try:
        return await work(process)
    finally:
        await process.close()


@pytest.mark.parametrize(("format_id", "folder"), [("gen9ou", "gen9ou"), ("gen9ubers", "gen9ou"),
                                                    ("gen4ou", "gen4ou"), ("gen1ou", "gen1ou")])
def test_the_fixture_teams_are_legal_for_the_simulators_own_validator(format_id: str, folder: str) -> None:
    async def work(process: SimProcess) -> list[Team]:
        return [await validate_team(process, format_id, read_team_file(p), p.name)
                for p in sorted((TEAMS / folder).glob("*.txt"))]

    teams = asyncio.run(_with_process(work))
    assert teams and all(len(t.species) == 6 and t.packed.count("]") == 5 for t in teams)


def test_an_illegal_team_gets_the_validators_reasons_in_one_line() -> None:
    async def work(process: SimProcess) -> str:
        with pytest.raises(TeamError) as caught:
            await validate_team(process, "gen9ou", read_team_file(ILLEGAL), ILLEGAL.name)
        return str(caught.value)

    message = asyncio.run(_with_process(work))
    assert "\n" not in message and message.startswith(ILLEGAL.name)
    assert "Koraidon is tagged Uber" in message and "Kingambit can't learn Spore" in message


def test_packed_text_is_a_team_too_and_random_formats_take_none() -> None:
    async def work(process: SimProcess) -> tuple[Team, Team, str]:
        first = await validate_team(process, "gen9ou", read_team_file(OU[0]), "export")
        again = await validate_team(process, "gen9ou", first.packed, "packed")
        with pytest.raises(TeamError) as caught:
            await validate_team(process, "gen9randombattle", first.packed, "x")
        return first, again, str(caught.value)

    first, again, refused = asyncio.run(_with_process(work))
    assert again.packed == first.packed and again.species == first.species
    assert "generates its own teams" in refused


def test_the_deal_is_a_pure_function_of_the_seed_and_each_seat_draws_from_its_pool() -> None:
    pool = tuple(Team(packed=f"t{i}", name=f"team{i}", species=()) for i in range(4))
    deal = TeamDeal(pool, pool)
    assert [deal.deal(s) for s in range(40)] == [TeamDeal(pool, pool).deal(s) for s in range(40)]
    dealt = {deal.deal(s)[side].name for s in range(40) for side in ("p1", "p2")}
    assert dealt == {t.name for t in pool}
    fixed = TeamDeal(pool[:1], pool)
    assert {fixed.deal(s)["p1"].name for s in range(20)} == {"team0"}
    with pytest.raises(TeamError, match="no team for p2"):
        TeamSources(team1=OU[0]).files()


def _preview_checks(recording: Recording) -> None:
    first = recording.turns[0]
    assert first.turn == 0 and first.deciding == ["p1", "p2"]
    for side in ("p1", "p2"):
        decision = first.decisions[side]
        assert [a.action for a in decision.legal_actions] == ["team"] * 6
        assert [a.choice for a in decision.legal_actions] == list(recording.teams[side].species)
        assert decision.action is not None and decision.action.action == "team"
        assert decision.command.startswith("team ")
        lead = int(decision.command.split()[1][0])
        assert decision.legal_actions[lead - 1].choice == decision.action.choice


def test_record_plays_a_gen9ou_battle_with_team_preview_and_keeps_both_teams(tmp_path: Path) -> None:
    done = run_cli("record", "--p1", "heuristic", "--p2", "random", "--format", "gen9ou", "--seed", "3",
                   "--team1", str(OU[0]), "--team2", str(OU[1]), "--max-turns", "40", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.split()[0])
    recording = load_recording(path)
    assert recording.teams is not None
    assert recording.teams["p1"].name == OU[0].name and recording.teams["p2"].name == OU[1].name
    assert all(recording.teams[s].packed in line for s, line in zip(("p1", "p2"), recording.inputlog[1:3]))
    _preview_checks(recording)
    assert any(d.action and d.action.action == "move" for t in recording.turns[1:] for d in t.decisions.values())
    assert json.loads(path.read_text())["teams"]["p1"]["species"][0] == "Great Tusk"
    assert asyncio.run(resimulate(recording)).ok
    view = BattleView(BattleMeta.of(recording), list(recording.turns))  # the viewer shows the preview decision
    lead = recording.turns[0].decisions["p1"].action
    assert lead is not None and f"lead with {lead.choice}" in view.html(0, "p1")
    assert all(view.html(i, side) for i in range(view.steps) for side in ("p1", "p2", None))
    branched = run_cli("branch", str(path), "--at", "3", "--p2", "maxdamage", "--out", str(tmp_path / "b"))
    assert branched.returncode == 0, branched.stderr  # a branch plays on with the parent's teams
    child = load_recording(Path(branched.stdout.split()[0]))
    assert child.teams == recording.teams

    def commands(rec: Recording) -> list[dict[str, str]]:
        return [{s: d.command for s, d in t.decisions.items()} for t in rec.turns[:3]]

    assert commands(child) == commands(recording)


def test_record_refuses_an_illegal_team_with_the_validators_message_and_plays_nothing(tmp_path: Path) -> None:
    done = run_cli("record", "--p1", "random", "--p2", "random", "--format", "gen9ou", "--team1", str(ILLEGAL),
                   "--team2", str(OU[0]), "--out", str(tmp_path))
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("error: gen9ou-uber-and-spore.txt: team not legal in [Gen 9] OU")
    assert "Koraidon is tagged Uber" in line
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.parametrize(("format_id", "expected"), [
    ("gen9ou", "'gen9ou' needs a team for each side"),
    ("gen9doublesou", "'gen9doublesou' is a doubles format; only singles formats are supported"),
])
def test_a_team_format_without_teams_and_doubles_are_refused_in_one_line(tmp_path: Path, format_id: str,
                                                                         expected: str) -> None:
    extra = ["--teams", str(TEAMS / "gen9ou")] if "doubles" in format_id else []
    done = run_cli("record", "--p1", "random", "--p2", "random", "--format", format_id, *extra, "--out", str(tmp_path))
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and expected in line
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.parametrize("format_id", ["gen4ou", "gen1ou"])
def test_older_team_formats_play_without_a_preview(format_id: str) -> None:
    async def go() -> Recording:
        deal = await prepare_deal(TeamSources(pool=TEAMS / format_id), format_id)
        assert deal is not None
        return await play_battle(make_policy("maxdamage"), make_policy("random"), format_id=format_id, seed=9,
                                 teams=deal.infos(9), max_turns=25)

    recording = asyncio.run(go())
    assert recording.result.reason in ("win", "turn_limit", "tie")
    assert recording.teams is not None and len(recording.teams["p1"].species) == 6
    assert all(a.action != "team" for t in recording.turns for d in t.decisions.values() for a in d.legal_actions)
    assert asyncio.run(resimulate(recording)).ok


def test_preview_requests_offer_one_lead_per_pokemon() -> None:
    request = {"teamPreview": True, "side": {"pokemon": [{"details": "Great Tusk"}, {"details": "Kingambit, F"}]}}
    actions = legal_actions(request)
    assert [(a.kind, a.name, a.command()) for a in actions] == [("team", "Great Tusk", "team 1"),
                                                               ("team", "Kingambit", "team 2")]


def test_random_battle_recordings_and_tournament_ids_do_not_mention_teams() -> None:
    recording = asyncio.run(play_battle(make_policy("random"), make_policy("random"), format_id="gen9randombattle",
                                        seed=2, max_turns=3))
    assert recording.teams is None and '"teams"' not in recording.to_json()
    config = TournamentConfig(players=("random", "maxdamage"), pairs=1, format="gen9randombattle", seed=0)
    assert "teams" not in config.to_dict()


def test_bench_with_a_team_pool_swaps_seats_and_teams_within_each_pair(tmp_path: Path) -> None:
    # 2 pairs (4 battles) of gen9ou with the 4-team pool: a 20-pair run is too slow for the suite
    done = run_cli("bench", "--players", "random,maxdamage", "--pairs", "2", "--format", "gen9ou", "--seed", "1",
                   "--teams", str(TEAMS / "gen9ou"), "--max-turns", "30", "--concurrency", "2",
                   "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    [directory] = [p for p in tmp_path.iterdir() if p.is_dir()]
    config = TournamentConfig.from_dict(json.loads((directory / "tournament.json").read_text()))
    assert [t.name for t in config.teams] == [p.name for p in OU]
    recordings = {r.id: r for r in map(load_recording, (directory / "recordings").glob("*.json"))}
    schedule = build_schedule(config)
    assert len(recordings) == len(schedule) == 4
    swapped = 0
    for pair in (0, 1):
        game0, game1 = (recordings[b.battle_id] for b in schedule if b.pair == pair)
        assert game0.players["p1"].policy == game1.players["p2"].policy  # seats swapped …
        teams0 = {game0.players[s].policy: game0.teams[s].name for s in ("p1", "p2")}
        teams1 = {game1.players[s].policy: game1.teams[s].name for s in ("p1", "p2")}
        assert {s: game0.teams[s].name for s in ("p1", "p2")} == {s: game1.teams[s].name for s in ("p1", "p2")}
        if teams0["random"] != teams0["maxdamage"]:
            assert teams1 == {"random": teams0["maxdamage"], "maxdamage": teams0["random"]}  # … and teams
            swapped += 1
        _preview_checks(game0)
    assert swapped  # seed 1 deals two different teams in pair 1


def test_the_llm_policy_leads_by_its_documented_default_and_says_it_is_outside_its_format(
        tiny_checkpoint) -> None:
    llm = make_policy(f"llm:{tiny_checkpoint}/adapters/a")

    async def go() -> Recording:
        deal = await prepare_deal(TeamSources(team1=OU[2], team2=OU[3]), "gen9ou")
        assert deal is not None
        return await play_battle(llm, make_policy("random"), format_id="gen9ou", seed=4, teams=deal.infos(4),
                                 max_turns=3)

    recording = asyncio.run(go())
    preview = recording.turns[0].decisions["p1"]
    assert preview.command == "team 1" and preview.action is not None and preview.action.choice == "Ting-Lu"
    assert preview.policy_info["mode"] == "preview-default"
    later = [t.decisions["p1"] for t in recording.turns[1:] if "p1" in t.decisions]
    assert later and all("candidates" in d.policy_info for d in later)
    for decision in (preview, *later):
        assert "trained on random battles, not gen9ou" in decision.policy_info["format_note"]
