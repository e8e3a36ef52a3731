"""Battle analysis — win probability at every decision, option values, turning points, the value export (issue 31).

Real recordings replayed on the real simulator; rollouts are heuristic against heuristic with K kept small.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import shutil
from pathlib import Path

import datasets
import pytest

from wolfeclick.analysis.core import AnalysisStopped, analyse, estimate, mistakes, option_table, turning_points
from wolfeclick.analysis.rollout import RESET_LINE, Forks, lean_rollout, prefix_lines, rollout
from wolfeclick.analysis.schema import ANALYSIS_SCHEMA, AnalysedDecision, Analysis, Estimate, load_analyses
from wolfeclick.battle.branch import BranchError
from wolfeclick.battle.lean import play_winner
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.cli import main
from wolfeclick.errors import InputError
from wolfeclick.interop.export import read_rows
from wolfeclick.sim.process import SimPool

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen9randombattle-s1-heuristic-vs-maxdamage.json"
HEURISTIC = make_policy("heuristic")


def run(coroutine):
    return asyncio.run(coroutine)


def on_one_simulator(body):
    """``body(pool)`` played to its end on one simulator process: a test's several parts (rollouts, analyses) share
    it instead of starting a simulator for each (which process plays a battle never changes the battle)."""
    async def go():
        async with SimPool(1) as pool:
            return await body(pool)

    return asyncio.run(go())


@contextlib.asynccontextmanager
async def _simulator(pool: SimPool | None):
    """``pool`` when the test gives one, else a simulator of this call's own."""
    if pool is not None:
        yield pool
        return
    async with SimPool(1) as own:
        yield own


async def _analyse(recording: Recording, pool: SimPool | None = None, **options) -> Analysis:
    async with _simulator(pool) as sim:
        return await analyse(recording, HEURISTIC, pool=sim, **options)


async def _rollouts(recording: Recording, step: int, numbers: list[int], seed: int = 1, play=rollout,
                    pool: SimPool | None = None, **options) -> list:
    async with _simulator(pool) as sim:
        return [await play(recording, step, {"p1": HEURISTIC, "p2": HEURISTIC}, process=sim.pick(), seed=seed,
                           number=n, **options) for n in numbers]


async def _forked(recording: Recording, step: int, numbers: list[int], seed: int = 1, play=rollout,
                  pool: SimPool | None = None, **options) -> list:
    async with _simulator(pool) as sim:
        forks = Forks()
        try:
            return [await play(recording, step, {"p1": HEURISTIC, "p2": HEURISTIC}, process=sim.pick(),
                               seed=seed, number=n, forks=forks, **options) for n in numbers]
        finally:
            await forks.close()


@pytest.fixture(scope="module")
def sample() -> Recording:
    return load_recording(SAMPLE)


@pytest.fixture(scope="module")
def lost_by_p1() -> Recording:
    """A battle heuristic (p2) wins against random (p1), ending with a knockout."""
    recording = run(play_battle(make_policy("random"), make_policy("heuristic"), format_id="gen9randombattle",
                                seed=3))
    assert recording.result.winner == "p2"
    return recording


def ends_with_a_knockout(recording: Recording) -> bool:
    loser = "p2" if recording.result.winner == "p1" else "p1"
    tail = recording.log[recording.log.index(recording.turns[-1].events[-1]) + 1:] if recording.turns[-1].events \
        else recording.log
    return any(line.startswith(f"|faint|{loser}a") for line in tail)


def test_reseeding_changes_the_luck_but_never_the_battle_up_to_the_decision(sample: Recording) -> None:
    step = 18

    async def play(pool: SimPool) -> tuple[list, list, object]:
        return (await _rollouts(sample, step, [0, 1, 2, 3, 0], pool=pool),
                await _forked(sample, step, [0, 1, 2, 3, 0], pool=pool),
                (await _rollouts(sample, step, [0], seed=2, pool=pool))[0])

    outcomes, forked, other_seed = on_one_simulator(play)
    assert [o.log for o in forked] == [o.log for o in outcomes]  # a copy of the decision plays the same battles
    before = sum(len(turn.events) for turn in sample.turns[:step + 1])
    for outcome in outcomes:
        cut = outcome.log.index(RESET_LINE)
        assert cut == before and outcome.log[:cut] == sample.log[:cut]  # the prefix replays byte for byte
    continuations = [tuple(outcome.log[before:]) for outcome in outcomes]
    assert continuations[0] == continuations[4]  # the same rollout number: the same luck, the same battle
    assert len(set(continuations[:4])) == 4  # another number: other luck
    assert tuple(other_seed.log[before:]) not in continuations  # another analysis seed: other luck again
    assert len(prefix_lines(sample, step)) == 3 + sum(len(turn.deciding) for turn in sample.turns[:step])


def test_a_lean_rollout_plays_the_very_battle_of_the_full_one(sample: Recording) -> None:
    """Winner only (no log, records, snapshots or rewards), yet the same simulator input to the end: the same battle,
    forked or replayed, whichever opening is forced, whatever the luck."""
    numbers = [0, 1, 2, 3, 4]
    winners = set()

    async def check(pool: SimPool) -> None:
        for step in (2, 10, 18):
            full = await _rollouts(sample, step, numbers, pool=pool)
            for lean in (await _rollouts(sample, step, numbers, play=lean_rollout, pool=pool),
                         await _forked(sample, step, numbers, play=lean_rollout, pool=pool)):
                assert [(o.winner, o.reason) for o in lean] == [(o.winner, o.reason) for o in full]
                assert [o.inputlog for o in lean] == [o.inputlog for o in full] and all(o.log == [] for o in lean)
            assert all(o.inputlog[:len(prefix_lines(sample, step))] == prefix_lines(sample, step) for o in full)
            winners.update(o.winner for o in full)
        assert winners == {"p1", "p2"}  # the luck decided some of them: the comparison could have told them apart
        legal = sample.turns[10].decisions["p1"].legal_actions
        for action in legal[-2:]:
            opened = {"first": {"p1": action}}
            full = await _rollouts(sample, 10, [0, 1], pool=pool, **opened)
            lean = await _forked(sample, 10, [0, 1], play=lean_rollout, pool=pool, **opened)
            assert [(o.winner, o.inputlog) for o in lean] == [(o.winner, o.inputlog) for o in full]

    on_one_simulator(check)


def test_a_lean_battle_ends_as_the_recorded_one() -> None:
    async def both(pool: SimPool) -> list:
        played = []
        for p1, p2, seed in (("heuristic", "maxdamage", 1), ("random", "heuristic", 3), ("maxdamage", "random", 4)):
            full = await play_battle(make_policy(p1), make_policy(p2), format_id="gen9randombattle", seed=seed,
                                     process=pool.pick())
            lean = await play_winner(make_policy(p1), make_policy(p2), format_id="gen9randombattle", seed=seed,
                                     process=pool.pick())
            played.append((full, lean))
        return played

    for full, lean in on_one_simulator(both):
        assert (lean.winner, lean.reason, lean.inputlog) == (full.result.winner, full.result.reason, full.inputlog)


def test_lean_and_full_analyses_write_the_same_bytes(sample: Recording) -> None:
    async def both(pool: SimPool) -> tuple[Analysis, Analysis]:
        return (await _analyse(sample, pool=pool, k=3, seed=4, steps=[9, 10], options=("p1",), at=[10]),
                await _analyse(sample, pool=pool, k=3, seed=4, steps=[9, 10], options=("p1",), at=[10], lean=False))

    lean, full = on_one_simulator(both)
    assert lean.to_json() == full.to_json() and lean.decisions[1].options["p1"].options


def test_a_seeded_analysis_repeats_exactly_at_any_concurrency_forked_or_replayed(sample: Recording) -> None:
    steps = [11, 12]

    async def both(pool: SimPool) -> tuple[Analysis, Analysis]:
        return (await _analyse(sample, pool=pool, k=8, seed=5, steps=steps, concurrency=16),
                await _analyse(sample, pool=pool, k=8, seed=5, steps=steps, concurrency=1, fork=False))

    first, again = on_one_simulator(both)
    assert first.to_json() == again.to_json()
    assert [d.index for d in first.decisions] == steps and all(d.win.rollouts == 8 for d in first.decisions)
    assert Analysis.model_validate_json(first.to_json()) == first and first.schema_ == ANALYSIS_SCHEMA


def test_an_analysis_makes_each_rollout_only_when_a_slot_is_free(sample: Recording) -> None:
    """Issue 60: every rollout of an analysis used to be made at once as a task waiting for one of ``concurrency``
    slots (K = 64 with both sides' options in the app: ~30k tasks, ~100 MB). Now the tasks alive at any point are
    the estimates' own (one each) and the rollouts playing, whatever K is; the same bytes come out."""
    most: list[int] = []

    def progress(done: int, total: int) -> None:
        most.append(len(asyncio.all_tasks()))

    analysis = run(_analyse(sample, k=6, seed=5, steps=[11, 12], options=("p1",), concurrency=2, progress=progress))
    estimates = sum(1 + len(d.options["p1"].options if "p1" in d.options else []) for d in analysis.decisions)
    assert len(most) == 6 * estimates  # every rollout counted: six times what the estimates alone hold
    assert max(most) <= estimates + 2 + 6  # the estimates, two playing, the run's own few (the pool's readers)
    assert analysis.to_json() == run(_analyse(sample, k=6, seed=5, steps=[11, 12], options=("p1",),
                                              concurrency=16)).to_json()


def test_a_stopped_analysis_ends_with_its_error_and_plays_no_more(sample: Recording) -> None:
    """Stop set after three rollouts: the analysis raises ``AnalysisStopped`` rather than waiting on slots; at
    most the rollouts already playing finish."""
    stop = asyncio.Event()
    counted: list[int] = []

    def progress(done: int, total: int) -> None:
        counted.append(done)
        if done >= 3:
            stop.set()

    with pytest.raises(AnalysisStopped):
        run(_analyse(sample, k=6, seed=5, steps=[11, 12], options=("p1",), concurrency=2, progress=progress,
                     stop=stop))
    assert 3 <= len(counted) <= 3 + 2


def test_a_seeded_racing_analysis_repeats_byte_for_byte_and_its_survivors_read_as_uniform(sample: Recording) -> None:
    """Issue 48: racing on the real simulator, at two concurrencies, forked and replayed: the same bytes. An option
    raced to K has the very estimate uniform sampling gives it (shared luck); one stopped early says so."""
    raced = {"k": 16, "seed": 3, "steps": [10, 11], "options": ("p1",), "at": [10], "sampling": "racing", "batch": 4}

    async def three(pool: SimPool) -> tuple[Analysis, Analysis, Analysis]:
        return (await _analyse(sample, pool=pool, concurrency=16, **raced),
                await _analyse(sample, pool=pool, concurrency=1, fork=False, **raced),
                await _analyse(sample, pool=pool, k=16, seed=3, steps=[10, 11], options=("p1",), at=[10]))

    first, again, uniform = on_one_simulator(three)
    assert first.to_json() == again.to_json()
    assert first.sampling == "racing" and first.batch == 4 and Analysis.model_validate_json(first.to_json()) == first
    assert uniform.sampling == "uniform" and '"sampling": "uniform"' in uniform.to_json()
    table, full = first.decisions[0].options["p1"], uniform.decisions[0].options["p1"]
    exact = {(o.action.action, o.action.choice): o.estimate for o in full.options}
    for option in table.options:
        if option.estimate.rollouts == 16:
            assert option.estimate == exact[(option.action.action, option.action.choice)]
        if option.stopped_early:
            assert option.estimate.rollouts < 16 and option.estimate.high < table.options[0].estimate.high
    assert all(4 <= d.win.rollouts <= 16 and d.win.rollouts % 4 == 0 for d in first.decisions)
    used = sum(o.estimate.rollouts for d in first.decisions for t in d.options.values() for o in t.options)
    assert used <= sum(len(o.options) * 16 for d in uniform.decisions for o in d.options.values())


def test_one_move_from_a_certain_win_reads_high_and_a_lost_one_low(sample: Recording,
                                                                   lost_by_p1: Recording) -> None:
    assert sample.result.winner == "p1" and ends_with_a_knockout(sample) and ends_with_a_knockout(lost_by_p1)

    async def both(pool: SimPool) -> tuple[Analysis, Analysis]:
        return (await _analyse(sample, pool=pool, k=16, seed=2, steps=[len(sample.turns) - 1]),
                await _analyse(lost_by_p1, pool=pool, k=16, seed=2, steps=[len(lost_by_p1.turns) - 1]))

    won, lost = on_one_simulator(both)
    assert won.decisions[0].win.value >= 0.95, won.decisions[0].win
    assert lost.decisions[0].win.value <= 0.05, lost.decisions[0].win


def _knockout_with_no_reply(recording: Recording, step: int, side: str) -> bool:
    opponent = "p2" if side == "p1" else "p1"
    for line in recording.turns[step + 1].events:
        if line.startswith((f"|move|{opponent}a", f"|switch|{opponent}a")):
            return False
        if line.startswith(f"|faint|{opponent}a"):
            return True
    return False


def _fainted_on_entry(outcome, side: str) -> bool:
    after = outcome.log[outcome.log.index(RESET_LINE):]
    end = next((n for n, line in enumerate(after) if line.startswith("|turn|")), len(after))
    return any(line.startswith(f"|faint|{side}a: ") for line in after[:end])


def test_option_values_rank_a_knockout_above_a_switch_into_a_faint() -> None:
    """Heuristic against heuristic, gen9 seed 3: at decision 1 p1's Gunk Shot knocks p2's active out before it
    moves; switching to Rhyperior instead lets it be knocked out as it comes in."""
    step, switch = 1, ActionRecord(action="switch", choice="Rhyperior")

    async def play(pool: SimPool) -> tuple[Recording, list, Analysis]:
        recording = await play_battle(HEURISTIC, HEURISTIC, format_id="gen9randombattle", seed=3, process=pool.pick())
        assert switch in recording.turns[step].decisions["p1"].legal_actions
        return (recording, await _forked(recording, step, list(range(8)), seed=0, first={"p1": switch}, pool=pool),
                await _analyse(recording, pool=pool, k=8, seed=0, options=("p1",), at=[step], steps=[step]))

    recording, switched, analysis = on_one_simulator(play)
    played = recording.turns[1].decisions["p1"].action
    assert played == ActionRecord(action="move", choice="Gunk Shot") and _knockout_with_no_reply(recording, 1, "p1")
    assert all(_fainted_on_entry(outcome, "p1") for outcome in switched)  # a switch into a faint, every time
    table = analysis.decisions[0].options["p1"]
    ranks = {(o.action.action, o.action.choice): o for o in table.options}
    knockout, fodder = ranks[("move", "Gunk Shot")], ranks[("switch", "Rhyperior")]
    assert knockout.rank < fodder.rank and knockout.estimate.value > fodder.estimate.value
    assert fodder.estimate.wins == sum(o.winner == "p1" for o in switched)  # the same rollouts, the same luck
    assert table.played == played and table.played_rank == knockout.rank


def test_a_recording_whose_prefix_does_not_reach_its_states_is_refused(sample: Recording) -> None:
    data = json.loads(sample.to_json())
    data["turns"][5]["decisions"]["p1"]["state"] += "\nedited"
    edited = Recording.model_validate_json(json.dumps(data))

    async def refused(pool: SimPool) -> None:
        for play in (rollout, lean_rollout):
            with pytest.raises(BranchError, match="decision 6: the replayed prefix does not reach the recorded state"):  # step 5
                await _rollouts(edited, 5, [0], play=play, pool=pool)
        with pytest.raises(BranchError, match="--at 27 is not a decision of .* \\(it has 27: 0 to 26\\)"):
            await _analyse(sample, pool=pool, k=1, options=("p1",), at=[3, 27])

    on_one_simulator(refused)
    with pytest.raises(BranchError, match="step must be between 0 and 26"):
        prefix_lines(sample, 27)


# --- pure summaries -------------------------------------------------------------------------------------------


def _estimate(wins: int, n: int, side: str = "p1") -> Estimate:
    return estimate([side] * wins + ["p2" if side == "p1" else "p1"] * (n - wins), side)


def test_estimates_count_ties_half_and_carry_wilson_intervals() -> None:
    est = estimate(["p1", "p1", None, "p2"], "p1")
    assert (est.wins, est.losses, est.draws, est.value) == (2, 1, 1, 0.625)
    assert est.low < est.value < est.high
    assert estimate(["p2"] * 8, "p1").value == 0.0 and estimate(["p2"] * 8, "p1").low == 0.0


def test_a_mistake_needs_separated_intervals_and_the_margin() -> None:
    move, switch, other = (ActionRecord(action="move", choice="Earthquake"),
                           ActionRecord(action="switch", choice="Gurdurr"), ActionRecord(action="move", choice="Rest"))
    values = [(switch, _estimate(2, 64)), (move, _estimate(60, 64)), (other, _estimate(58, 64))]
    table = option_table("p1", values, switch, 0.15)
    assert [o.action for o in table.options] == [move, other, switch] and table.played_rank == 3
    assert table.mistake and table.loss == pytest.approx(58 / 64)
    assert not option_table("p1", values, other, 0.15).mistake  # close to the best: no mistake
    few = [(switch, _estimate(1, 4)), (move, _estimate(4, 4))]
    assert not option_table("p1", few, switch, 0.15).mistake  # intervals of 4 rollouts overlap
    assert not option_table("p1", values, switch, 0.95).mistake  # below the stated margin


def test_turning_points_are_the_largest_moves_including_the_end() -> None:
    decisions = [AnalysedDecision(index=i, turn=i + 1, deciding=["p1"], win=_estimate(w, 10))
                 for i, w in enumerate([5, 6, 1, 2, 9])]
    points = turning_points(decisions, "p2", most=2)
    assert [(p.index, p.before, p.after, p.swing) for p in points] == [(4, 0.9, 0.0, -0.9), (3, 0.2, 0.9, 0.7)]
    assert mistakes(decisions) == []


# --- the command and the value export ---------------------------------------------------------------------------


ANALYSED: dict[str, str] = {}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory) -> Path:
    """The sample recording analysed by the command (K = 2 everywhere, p1's options at its last decision)."""
    folder = tmp_path_factory.mktemp("analysed")
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    last = len(load_recording(SAMPLE).turns) - 1
    argv = ["analyse", str(folder / SAMPLE.name), "--k", "2", "--seed", "4", "--options", "p1", "--at", str(last)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    ANALYSED["out"] = printed.getvalue()
    return folder


def test_analyse_writes_a_versioned_file_beside_the_recording_and_a_line_per_battle(
        analysed: Path, sample: Recording) -> None:
    found, broken = load_analyses(analysed, sample.id)
    assert broken == 0 and len(found) == 1
    analysis = found[0]
    path = analysed / "analyses" / sample.id / "heuristic-k2-s4.json"
    assert json.loads(path.read_text())["schema"] == ANALYSIS_SCHEMA
    assert [d.index for d in analysis.decisions] == [t.index for t in sample.turns]
    table = analysis.decisions[-1].options["p1"]
    legal = sample.turns[-1].decisions["p1"].legal_actions
    assert sorted((o.action.action, o.action.choice) for o in table.options) == sorted(
        (a.action, a.choice) for a in legal)
    assert table.played == sample.turns[-1].decisions["p1"].action and table.played_rank is not None
    assert all(not d.options for d in analysis.decisions[:-1])
    assert len(analysis.turning_points) == 3
    out = ANALYSED["out"].splitlines()
    assert len(out) == 1 and out[0].startswith(f"{sample.id}: p1 (heuristic) won; p1 at the start ")
    assert "biggest swing at turn" in out[0] and out[0].endswith(f"({path})")
    assert path.read_bytes() == analysis.to_json().encode()


def test_analyse_refuses_bad_arguments_in_one_line(analysed: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyse", str(analysed / SAMPLE.name), "--at", "3"]) == 2
    assert main(["analyse", str(analysed / SAMPLE.name), "--policy", "nonsense"]) == 2
    data = json.loads(SAMPLE.read_text())
    data["turns"][0]["decisions"]["p2"]["state"] += "\nedited"
    edited = tmp_path / SAMPLE.name
    edited.write_text(json.dumps(data))
    assert main(["analyse", str(edited), "--k", "2"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: --at says where to value options; give --options p1|p2|both too"
    assert err[1].startswith("error: unknown policy spec 'nonsense'")
    assert err[2].startswith(f"error: {edited}: ") and "does not reach the recorded state of p2" in err[2]
    assert len(err) == 3 and not (tmp_path / "analyses").exists()


def test_export_as_value_gives_each_decision_its_state_and_values_and_loads_with_datasets(
        analysed: Path, sample: Recording, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "value.jsonl"
    assert main(["export", str(analysed), "--side", "both", "--as", "value", "--out", str(out)]) == 0
    rows = read_rows(out)
    expected = [(t.index, side) for t in sample.turns for side in ("p1", "p2") if side in t.decisions]
    assert [(r["index"], r["side"]) for r in rows] == expected
    analysis = load_analyses(analysed, sample.id)[0][0]
    by_index = {d.index: d for d in analysis.decisions}
    for row in rows:
        turn = sample.turns[row["index"]]
        assert row["state"] == turn.decisions[row["side"]].state
        p1 = by_index[row["index"]].win.value
        assert row["win_probability"] == pytest.approx(p1 if row["side"] == "p1" else 1 - p1)
    last = [r for r in rows if r["index"] == len(sample.turns) - 1 and r["side"] == "p1"][0]
    assert len(last["options"]) == len(sample.turns[-1].decisions["p1"].legal_actions)
    assert last["played_value"] is not None and last["advantage"] == pytest.approx(
        last["played_value"] - last["win_probability"])
    assert all(r["options"] == [] and r["advantage"] is None for r in rows if r is not last)
    table = datasets.load_dataset("json", data_files=str(out), split="train")
    assert table.num_rows == len(rows) and {"state", "win_probability", "options"} <= set(table.column_names)
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(SAMPLE, bare / SAMPLE.name)
    capsys.readouterr()
    assert main(["export", str(bare), "--as", "value", "--out", str(tmp_path / "none.jsonl")]) == 2
    assert "recordings without an analysis" in capsys.readouterr().err


def _hostile_analysis(sample: Recording) -> Analysis:
    hostile = ActionRecord(action="move", choice="<img src=x onerror=alert(1)>")
    plain = ActionRecord(action="switch", choice="Gurdurr")
    decisions = [AnalysedDecision(index=i, turn=i + 1, deciding=["p1"], win=_estimate(w, 64))
                 for i, w in enumerate([32, 60, 4])]
    decisions[1].options["p1"] = option_table("p1", [(hostile, _estimate(2, 64)), (plain, _estimate(62, 64))],
                                              hostile, 0.15)
    return Analysis(recording=sample.id, policy="<b>heuristic</b>", k=64, seed=0, margin=0.15, winner="p1",
                    decisions=decisions, turning_points=turning_points(decisions, "p1"), mistakes=mistakes(decisions))


def test_the_viewer_gets_marks_by_step_as_text_and_option_tables_escaped(sample: Recording) -> None:
    from wolfeclick.ui.analysis_view import viewer_analysis

    analysis = _hostile_analysis(sample)
    part = viewer_analysis(analysis)
    assert sorted(part["marks"]) == ["0", "1", "2"]  # three decisions, three swings (the last one to the result)
    assert all("turning" in part["marks"][str(p.index)] for p in analysis.turning_points)
    assert [i for i, m in part["marks"].items() if "mistake" in m] == ["1"]
    loss = analysis.mistakes[0].loss
    assert part["marks"]["1"]["mistake"] == (f"p1's mistake: move <img src=x onerror=alert(1)> lost {loss:.2f} "
                                             "(best switch Gurdurr)")  # text: the viewer sets it as text
    assert list(part["options"]) == ["1"] and "<img" not in part["options"]["1"]
    assert "&lt;img src=x" in part["options"]["1"] and part["options"]["1"].count("<tr") == 3 and part["k"] == 64
    assert "Decision 2 (turn" in part["options"]["1"]  # counted from 1, as the viewer beside it counts


def test_the_analysis_card_escapes_every_text_and_marks_what_the_analysis_found(sample: Recording) -> None:
    from wolfeclick.ui.analysis_view import analysis_card

    analysis = _hostile_analysis(sample)
    card = analysis_card(analysis, sample)
    assert "<img" not in card and "<b>heuristic" not in card and "&lt;img src=x" in card
    assert card.count('class="wc-an-turning"') == 3 and card.count('class="wc-an-mistake"') == 1
    assert card.count("<polyline") == 1 and card.count("<polygon") == 1  # p1's line and band (issue 47, item 2)
    assert all(f">{pct}%</text>" in card for pct in (0, 50, 100)) and 'class="wc-an-cursor"' in card
    # issue 47 (1): the card lists no option table (they pushed the viewer ~10,000 px down); the viewer's panel shows
    # the shown decision's (viewer_analysis, above)
    assert "wc-an-options" not in card and "1 valued" in card


def test_the_option_table_says_which_options_racing_stopped_early(sample: Recording) -> None:
    """Issue 48: a raced option table names the options stopped early and after how many rollouts; old files (no
    ``stopped_early``, no ``sampling``) still load, as uniform analyses."""
    from wolfeclick.ui.analysis_view import option_table_html

    played, best = ActionRecord(action="switch", choice="Gurdurr"), ActionRecord(action="move", choice="Surf")
    decisions = [AnalysedDecision(index=0, turn=1, deciding=["p1"], win=_estimate(8, 16))]
    decisions[0].options["p1"] = option_table("p1", [(played, _estimate(0, 8)), (best, _estimate(60, 64))], played,
                                              0.15, stopped=[played])
    analysis = Analysis(recording=sample.id, policy="heuristic", k=64, seed=0, margin=0.15, winner="p1",
                        decisions=decisions, turning_points=[], mistakes=mistakes(decisions), sampling="racing")
    html = option_table_html(analysis, 0)
    assert html.count("stopped early after 8 rollouts") == 1 and "a mistake" in html
    old = json.loads(analysis.to_json())
    for key in ("sampling", "batch", "width"):
        del old[key]
    for option in old["decisions"][0]["options"]["p1"]["options"]:
        del option["stopped_early"]
    again = Analysis.model_validate(old)
    assert again.sampling == "uniform" and "stopped early" not in option_table_html(again, 0)


# ------------------------------------------------------------------------------------------ which policies Ray plays
class Named:
    """A policy known by its spec alone: what the Ray engine sends its workers (they rebuild it there)."""

    blocking = False

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def decide(self, observation):  # noqa: ANN001, ANN201
        raise AssertionError("a refused policy is never asked")


def _agent() -> object:
    """An installed agent's factory (never called here)."""
    raise AssertionError("not built: the check reads the registry only")


def test_ray_rollouts_ask_the_registry_which_kinds_a_worker_can_play() -> None:
    from wolfeclick.analysis.ray_rollouts import check_ray_rollouts
    from wolfeclick.policies.registry import PolicyKind, PolicyRegistry, builtin_kinds

    registry = PolicyRegistry([*builtin_kinds(), PolicyKind("mine", "An agent.", _agent, external=True),
                               PolicyKind("big", "A model agent.", _agent, external=True, gpu=True)],
                              entry_points=False)
    for spec in ("heuristic", "random", "maxdamage", "py:someone.agents:make?depth=2", "mine"):
        check_ray_rollouts(spec, registry)  # built in each worker from the spec: no refusal
    refusals = {spec: "" for spec in ("llm:someone/model", "preset:run1", "big", "human", "showdown:bob")}
    for spec in refusals:
        with pytest.raises(InputError) as info:
            check_ray_rollouts(spec, registry)
        refusals[spec] = str(info.value)
        assert len(refusals[spec].splitlines()) == 1 and "baseline policies only" not in refusals[spec]
    assert all("need a GPU" in refusals[s] and "--engine local" in refusals[s] for s in ("llm:someone/model",
                                                                                          "preset:run1", "big"))
    assert "a person choosing with buttons" in refusals["human"]
    assert "plays on a Showdown server" in refusals["showdown:bob"]


def test_analyse_on_ray_refuses_a_checkpoint_before_anything_starts(sample: Recording,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="'llm' policies need a GPU"):
        run(analyse(sample, Named("llm:someone/model"), engine="ray", k=1, steps=[0]))
    # the command line refuses it before building the policy (which would load the model here)
    assert main(["analyse", str(SAMPLE), "--k", "1", "--engine", "ray", "--policy", "preset:run1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "'preset' policies need a GPU" in err[0]


def test_a_server_seat_plays_no_rollouts_on_either_engine(sample: Recording) -> None:
    for engine in ("local", "ray"):
        with pytest.raises(InputError, match="plays on a Showdown server"):
            run(analyse(sample, make_policy("showdown:bob"), engine=engine, k=1, steps=[0]))


class _CollectorProbe:
    """The heuristic, noting the cyclic collector's settings each time it is asked during a rollout."""

    blocking = False

    def __init__(self) -> None:
        self.spec = HEURISTIC.spec
        self.seen: set[tuple[int, int]] = set()
        self.asked = 0

    def metadata(self) -> dict:
        return HEURISTIC.metadata()

    def decide(self, observation):
        # the freeze count walks every frozen object (the whole heap here): read at the first decision and every
        # 32nd (each read was ~2 ms; 9 CPU s of a run read at every one), the threshold at every decision
        frozen = gc.get_freeze_count() if self.asked % 32 == 0 else 1
        self.asked += 1
        self.seen.add((gc.get_threshold()[0], frozen))
        return HEURISTIC.decide(observation)


@pytest.mark.own_collector  # the suite's freeze off: relaxed_gc's own is what is tested
def test_rollouts_run_with_imported_data_frozen_and_a_wide_young_generation_then_restore_the_collector(
        sample: Recording) -> None:
    """A rollout copies two poke-env battles (thousands of objects): with the default young generation that
    starts a collection every few hundred allocations, each older pass walking poke-env's imported data tables."""
    probe, before = _CollectorProbe(), (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())

    async def go() -> None:
        async with SimPool(1) as pool:
            await analyse(sample, probe, pool=pool, k=2, seed=1, steps=[10])

    run(go())
    assert probe.seen and all(threshold >= 10 * before[0][0] and frozen > 0 for threshold, frozen in probe.seen)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
