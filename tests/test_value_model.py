"""The value model — an instant win-probability estimate from the public state of every replay (issue 48, item 3).

The viewer shows its line the moment any replay opens (an imported one too), labelled an estimate; a stored rollout
analysis is drawn as before, the estimate beside it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from devkit.browser import CHROMIUM, Browser, open_replay
from devkit.samples import SAMPLE_ID
from wolfeclick.analysis import value_model as vm
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.interop.sniff import read_any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen9randombattle-s1-heuristic-vs-maxdamage.json"
PUBLIC_LOG = ROOT / "tests" / "data" / "interop" / "showdown_replay.json"
LABEL = "estimate from the public state — not rollouts"


@pytest.fixture(scope="module")
def sample() -> Recording:
    return load_recording(SAMPLE)


@pytest.fixture(scope="module")
def imported() -> Recording:
    return read_any(PUBLIC_LOG.read_bytes(), PUBLIC_LOG.name)


# ------------------------------------------------------------------------------------------------------- the viewer
def _opened(tmp_path: Path, recording: Recording, analysis: object = None) -> str:
    """The card HTML beside the viewer when the app opens ``recording`` (the Replays tab's own ``_prepare``), with
    ``analysis`` stored beside it if given."""
    from wolfeclick.analysis.schema import save_analysis
    from wolfeclick.ui.context import AppContext
    from wolfeclick.ui.library import Library
    from wolfeclick.ui.tabs.replays import _prepare

    folder = tmp_path / "recordings"
    folder.mkdir()
    (folder / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    if analysis is not None:
        save_analysis(analysis, folder)  # type: ignore[arg-type]
    ctx = AppContext(library=Library(folder), results=tmp_path / "results")
    _payload, _json, _html, cards = _prepare(ctx, recording.id, None, None)
    return cards


@pytest.mark.parametrize("which", ["sample", "imported"])
def test_an_unanalysed_replay_opens_with_the_estimate_line_labelled(tmp_path: Path, which: str,
                                                                    request: pytest.FixtureRequest) -> None:
    recording = request.getfixturevalue(which)
    cards = _opened(tmp_path, recording)
    assert LABEL in cards and "wc-an-estimate" in cards
    assert cards.count('class="wc-svg wc-an-chart"') == 1 and 'class="wc-an-cursor"' in cards
    line = cards.split('<polyline class="wc-an-estimate', 1)[1].split('points="', 1)[1].split('"', 1)[0]
    assert len(line.split()) == len(recording.turns)  # one point per decision
    assert "<polygon" not in cards  # no rollouts, no band
    assert "Analyse this battle" in cards  # where the rollouts that refine it are asked for


def test_an_analysed_replay_shows_its_rollouts_and_the_estimate_beside_them(tmp_path: Path, sample: Recording) -> None:
    from wolfeclick.analysis.core import estimate, turning_points
    from wolfeclick.analysis.schema import AnalysedDecision, Analysis

    decisions = [AnalysedDecision(index=t.index, turn=t.turn, deciding=list(t.deciding),
                                  win=estimate(["p1", "p2", "p1", "p2"], "p1")) for t in sample.turns]
    analysis = Analysis(recording=sample.id, policy="heuristic", k=4, seed=0, margin=0.15, winner="p1",
                        decisions=decisions, turning_points=turning_points(decisions, "p1"), mistakes=[])
    cards = _opened(tmp_path, sample, analysis)
    assert "heuristic rollouts, K = 4" in cards and cards.count("<polygon") == 1  # the rollout line and its band
    assert cards.count('class="wc-svg wc-an-chart"') == 1 and "wc-an-estimate" in cards and LABEL in cards


# ------------------------------------------------------------------------------------------------- features, model
def swapped(recording: Recording) -> Recording:
    """The same battle with the sides' names exchanged everywhere the value model reads (snapshots, deciding sides,
    protocol events)."""
    def flip(text: str) -> str:
        return re.sub(r"\bp([12])", lambda m: "p" + ("2" if m.group(1) == "1" else "1"), text)

    data = json.loads(recording.to_json())
    for turn in data["turns"]:
        turn["snapshot"] = {"p1": turn["snapshot"]["p2"], "p2": turn["snapshot"]["p1"]}
        turn["decisions"] = {flip(side): decision for side, decision in turn["decisions"].items()}
        turn["deciding"] = sorted(flip(side) for side in turn["deciding"])
        turn["events"] = [flip(line) for line in turn["events"]]
    data["players"] = {"p1": data["players"]["p2"], "p2": data["players"]["p1"]}
    return Recording.model_validate(data)


@pytest.mark.parametrize("which", ["sample", "imported"])
def test_features_read_each_decision_from_its_past_alone_and_change_nothing(which: str,
                                                                          request: pytest.FixtureRequest) -> None:
    recording = request.getfixturevalue(which)
    before = recording.to_json()
    rows = vm.decision_rows(recording.turns, recording.format)
    assert rows.shape == (len(recording.turns), len(vm.FEATURES)) and np.all(np.isfinite(rows))
    assert np.array_equal(rows, vm.decision_rows(recording.turns, recording.format))  # the same input, the same rows
    assert recording.to_json() == before  # nothing written back
    for cut in (1, len(recording.turns) // 2):  # a decision's row reads nothing after it
        assert np.array_equal(vm.decision_rows(recording.turns[:cut], recording.format), rows[:cut])
    left = vm.FEATURES.index("p1.left")
    assert rows[0, left] == 1.0 and rows[-1, left] < 1.0  # six standing at the start, fewer at the end


@pytest.mark.parametrize("which", ["sample", "imported"])
def test_swapping_the_sides_swaps_the_features_and_gives_one_minus_p(which: str,
                                                                    request: pytest.FixtureRequest) -> None:
    recording = request.getfixturevalue(which)
    rows = vm.decision_rows(recording.turns, recording.format)
    other = vm.decision_rows(swapped(recording).turns, recording.format)
    assert np.array_equal(other, vm.swap_sides(rows))
    assert not np.array_equal(other, rows)  # the sides do differ: the check above could fail
    model = vm.default_model()
    p, q = vm.win_probability(model, rows), vm.win_probability(model, other)
    assert np.allclose(p + q, 1.0, atol=1e-12)
    same = rows.copy()
    same[:, vm.WIDTH:2 * vm.WIDTH] = same[:, :vm.WIDTH]  # both sides in p1's position: an even game
    assert np.allclose(vm.win_probability(model, same), 0.5, atol=1e-12)


def test_the_public_field_follows_boosts_hazards_screens_and_tera() -> None:
    from wolfeclick.battle.schema import SideSnapshot, TurnRecord

    def snap(active: str) -> SideSnapshot:
        return SideSnapshot(active=active, active_hp=100.0, active_status=None, team_hp=100.0, fainted=0,
                            team=[{"species": active, "hp": 100.0, "active": True}])

    events = ["|switch|p1a: Garchomp|Garchomp, L77, M|100/100", "|switch|p2a: Skarmory|Skarmory, L81|100/100",
              "|turn|1", "|move|p1a: Garchomp|Swords Dance|p1a: Garchomp", "|-boost|p1a: Garchomp|atk|2",
              "|move|p2a: Skarmory|Spikes|p1a: Garchomp", "|-sidestart|p1: Alice|Spikes",
              "|-sidestart|p1: Alice|Spikes", "|-sidestart|p2: Bob|move: Reflect",
              "|-terastallize|p1a: Garchomp|Steel", "|-unboost|p2a: Skarmory|spe|9", "|turn|2"]
    turn = TurnRecord(index=0, turn=2, deciding=["p1", "p2"], decisions={}, events=events,
                      snapshot={"p1": snap("Garchomp"), "p2": snap("Skarmory")})
    row = dict(zip(vm.FEATURES, vm.decision_rows([turn], "gen9randombattle")[0]))
    assert row["p1.boost_atk"] == pytest.approx(2 / 6) and row["p2.boost_spe"] == -1.0  # stages stop at −6
    assert row["p1.spikes"] == pytest.approx(2 / 3) and row["p2.spikes"] == 0 and row["p2.reflect"] == 1.0
    assert row["p1.terastallized"] == 1.0 and row["p2.terastallized"] == 0.0
    assert row["p1.active_level"] == 0.77 and row["p2.active_level"] == 0.81
    assert row["p1.type_edge"] == -0.5  # Dragon and Ground (or Steel) into Steel/Flying: ½ at best
    assert row["p2.type_edge"] == -0.5  # Garchomp is Steel now: Steel and Flying hit it for ½
    untera = turn.model_copy(update={"events": [e for e in events if "terastallize" not in e]})
    assert dict(zip(vm.FEATURES, vm.decision_rows([untera], "gen9randombattle")[0]))["p2.type_edge"] == 0.0
    assert row["turn"] == 0.02
    switched = turn.model_copy(update={"events": [*events, "|switch|p1a: Ferrothorn|Ferrothorn, L80|100/100"]})
    again = dict(zip(vm.FEATURES, vm.decision_rows([switched], "gen9randombattle")[0]))
    assert again["p1.boost_atk"] == 0 and again["p1.spikes"] == pytest.approx(2 / 3)  # boosts leave, hazards stay


def test_how_each_side_has_played_is_read_from_the_public_lines() -> None:
    """Issue 62: who is playing is not known, how they play is shown. A switch out of a standing Pokémon counts (a
    replacement after a faint does not); a move that hurts the other side directly is a hit (hazard, recoil or
    weather damage, marked ``[from]``, is not); super effective counts +1 and resisted or not affecting −1."""
    from wolfeclick.battle.schema import SideSnapshot, TurnRecord

    snap = SideSnapshot(active="Garchomp", active_hp=100.0, active_status=None, team_hp=100.0, fainted=0, team=[])
    events = ["|switch|p1a: Garchomp|Garchomp, L77, M|100/100", "|switch|p2a: Skarmory|Skarmory, L81|100/100",
              "|turn|1", "|switch|p2a: Rotom|Rotom-Wash, L84|100/100", "|-damage|p2a: Rotom|88/100|[from] Spikes",
              "|move|p1a: Garchomp|Earthquake|p2a: Rotom", "|-immune|p2a: Rotom",
              "|turn|2", "|move|p1a: Garchomp|Stone Edge|p2a: Rotom", "|-resisted|p2a: Rotom",
              "|-damage|p2a: Rotom|70/100", "|-damage|p2a: Rotom|60/100", "|-damage|p1a: Garchomp|90/100|[from] item: Life Orb",
              "|move|p2a: Rotom|Hydro Pump|p1a: Garchomp", "|-supereffective|p1a: Garchomp",
              "|-damage|p1a: Garchomp|0 fnt", "|faint|p1a: Garchomp",
              "|switch|p1a: Ferrothorn|Ferrothorn, L80|100/100", "|turn|3"]
    turn = TurnRecord(index=0, turn=3, deciding=["p1", "p2"], decisions={}, events=events,
                      snapshot={"p1": snap, "p2": snap})
    row = dict(zip(vm.FEATURES, vm.decision_rows([turn], "gen9randombattle")[0]))
    assert row["p1.switch_rate"] == 0.0 and row["p2.switch_rate"] == pytest.approx(1 / 4)  # 1 switch, 1 move, + 2
    assert row["p1.hit_rate"] == pytest.approx(1 / 4) and row["p2.hit_rate"] == pytest.approx(1 / 3)
    assert row["p1.edge_rate"] == pytest.approx(-2 / 4) and row["p2.edge_rate"] == pytest.approx(1 / 3)
    start = turn.model_copy(update={"events": events[:3]})
    first = dict(zip(vm.FEATURES, vm.decision_rows([start], "gen9randombattle")[0]))
    assert [first[f"{s}.{n}"] for s in ("p1", "p2") for n in ("switch_rate", "hit_rate", "edge_rate")] == [0.0] * 6


def test_a_fixed_model_gives_the_output_worked_out_by_hand() -> None:
    """A model with one hidden unit and a linear term on two columns, against the formula written out."""
    n = len(vm.FEATURES)
    linear, hidden = np.zeros(n), np.zeros((1, n))
    left, hp = vm.FEATURES.index("p1.left"), vm.FEATURES.index("p1.team_hp")
    linear[left], hidden[0, hp] = 1.5, 2.0
    model = vm.ValueModel(mean=np.zeros(n), scale=np.ones(n), linear=linear, hidden=hidden, bias=np.array([0.25]),
                          out=np.array([0.5]), card={})
    row = np.zeros((1, n))
    row[0, left], row[0, vm.WIDTH + left] = 5 / 6, 4 / 6
    row[0, hp], row[0, vm.WIDTH + hp] = 0.7, 0.4
    by_hand = 1.5 * (5 / 6 - 4 / 6) + 0.5 * (math.tanh(2 * 0.7 + 0.25) - math.tanh(2 * 0.4 + 0.25))
    assert vm.scores(model, row)[0] == pytest.approx(by_hand, abs=1e-12)
    assert vm.win_probability(model, row)[0] == pytest.approx(1 / (1 + math.exp(-by_hand)), abs=1e-12)
    again = vm.model_from_json(model.to_json())
    assert again.to_json() == model.to_json() and vm.scores(again, row)[0] == pytest.approx(by_hand, abs=1e-12)


def test_fitting_repeats_byte_for_byte_and_learns_what_the_data_say() -> None:
    rng = np.random.default_rng(7)
    rows = rng.uniform(0, 1, (400, len(vm.FEATURES)))
    left = vm.FEATURES.index("p1.left")
    gap = rows[:, left] - rows[:, vm.WIDTH + left]
    outcomes = (rng.uniform(0, 1, 400) < 1 / (1 + np.exp(-6 * gap))).astype(float)
    first = vm.fit(rows, outcomes, units=4, steps=300, seed=3)
    assert first.to_json() == vm.fit(rows, outcomes, units=4, steps=300, seed=3).to_json()
    assert first.to_json() != vm.fit(rows, outcomes, units=4, steps=300, seed=4).to_json()
    assert vm.brier(vm.win_probability(first, rows), outcomes) < vm.brier([outcomes.mean()] * 400, outcomes) - 0.03


def test_a_temperature_divides_the_score_and_is_fitted_back_from_outcomes_drawn_with_it() -> None:
    """Issue 62: the model is calibrated by a temperature fitted on held-out battles; folded into the weights it keeps
    the file's shape and the model's symmetry."""
    rng = np.random.default_rng(11)
    n = len(vm.FEATURES)
    model = vm.ValueModel(mean=np.zeros(n), scale=np.ones(n), linear=rng.normal(0, 1, n),
                          hidden=rng.normal(0, 0.5, (3, n)), bias=rng.normal(0, 0.5, 3), out=rng.normal(0, 1, 3),
                          card={"kept": 1})
    rows = rng.uniform(0, 1, (6000, n))
    cooled = vm.with_temperature(model, 0.5)
    assert np.allclose(vm.scores(cooled, rows), 2 * vm.scores(model, rows), atol=1e-12)
    assert cooled.card == {"kept": 1} and vm.with_temperature(model, 2.0, {"t": 2}).card == {"t": 2}
    assert np.allclose(vm.win_probability(cooled, vm.swap_sides(rows)) + vm.win_probability(cooled, rows), 1.0)
    outcomes = (rng.uniform(0, 1, len(rows)) < vm.win_probability(cooled, rows)).astype(float)
    fitted = vm.fit_temperature(model, rows, outcomes)
    assert fitted == vm.fit_temperature(model, rows, outcomes) and 0.4 < fitted < 0.6
    assert vm.fit_temperature(cooled, rows, outcomes) == pytest.approx(fitted / 0.5, rel=1e-3)


def test_each_generation_gets_its_own_temperature_from_the_card_and_the_shipped_one_has_both_formats() -> None:
    """Issue 62, fourth round: one temperature left gen9 overconfident and gen4 not; the card carries a factor per
    generation (fitted on its own calibration battles), the format picks it, symmetry holds, and a battle of a
    generation the card lacks (or no format) keeps the pooled temperature."""
    rng = np.random.default_rng(5)
    n = len(vm.FEATURES)
    model = vm.ValueModel(mean=np.zeros(n), scale=np.ones(n), linear=rng.normal(0, 1, n),
                          hidden=rng.normal(0, 0.5, (3, n)), bias=rng.normal(0, 0.5, 3), out=rng.normal(0, 1, 3),
                          card={"calibration": {"per_generation": {"9": 2.0, "4": 0.5}}})
    rows = rng.uniform(0, 1, (200, n))
    plain = 0.5 * (1 + np.tanh(vm.scores(model, rows) / 2))
    assert np.allclose(vm.win_probability(model, rows), plain)
    assert np.allclose(vm.win_probability(model, rows, "gen1randombattle"), plain)
    assert np.allclose(vm.win_probability(model, rows, "gen9randombattle"),
                       0.5 * (1 + np.tanh(vm.scores(model, rows) / 4)))
    assert np.allclose(vm.win_probability(model, rows, "gen4randombattle"), 0.5 * (1 + np.tanh(vm.scores(model, rows))))
    assert np.allclose(vm.win_probability(model, vm.swap_sides(rows), "gen9ou")
                       + vm.win_probability(model, rows, "gen9ou"), 1.0)
    shipped = vm.default_model().card["calibration"]
    assert set(shipped["per_generation"]) == {"9", "4"}
    assert all(0.5 < factor < 2 for factor in shipped["per_generation"].values())


def test_the_shipped_model_loads_and_a_file_for_other_features_is_refused(tmp_path: Path) -> None:
    model = vm.load_model()
    assert vm.MODEL_PATH.stat().st_size < 1_000_000 and model.card["train_battles"] > 0
    assert model.to_json() == vm.MODEL_PATH.read_text(encoding="utf-8")  # the file is what the writer writes
    data = json.loads(vm.MODEL_PATH.read_text(encoding="utf-8"))
    data["features"] = data["features"][:-1] + ["p1.something_else"]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="other features"):
        vm.load_model(tmp_path / "old.json")
    with pytest.raises(ValueError, match="not a value model"):
        vm.model_from_json('{"schema": "something/1"}')


def test_the_shipped_temperature_was_fitted_on_fresh_battles_in_the_evaluations_mix() -> None:
    """Issue 62, third round: fitted on the training mix (two thirds heuristic self-play) the temperature sharpened
    the model, and fresh battles in the evaluation's mix (every ordered pairing alike) found it overconfident. The
    calibration battles are that mix, in both formats, on seeds apart from every training group's."""
    card = vm.default_model().card
    calibration = card["calibration"]
    policies = ("heuristic", "maxdamage", "random")
    assert calibration["pairings"] == [f"{p1}:{p2}" for p1 in policies for p2 in policies]
    assert set(calibration["seeds"]) == {"gen9randombattle", "gen4randombattle"}
    assert calibration["battles"] == 2 * calibration["per_format"] >= 2 * 9 * 50
    blocks = [(first, first + len(calibration["pairings"]) * calibration["pairing_seeds"])
              for first in calibration["seeds"].values()]
    training = [(card["first_seed"] + i * card["group_seeds"], card["first_seed"] + (i + 1) * card["group_seeds"])
                for i in range(len(card["mix"]))]
    assert not any(a < d and c < b for a, b in blocks for c, d in training)  # no seed both trained and calibrated on
    assert calibration["pairing_seeds"] * len(calibration["pairings"]) <= abs(np.subtract(*calibration["seeds"].values()))


@pytest.mark.parametrize("name", ["showdown_replay.json", "showdown_hostile.log", "showdown_tierless.log"])
def test_the_model_evaluates_an_imported_public_log(name: str) -> None:
    path = ROOT / "tests" / "data" / "interop" / name
    recording = read_any(path.read_bytes(), path.name)
    assert recording.source.kind == "imported" and not recording.inputlog  # only the public log is known
    line = vm.estimate_battle(vm.default_model(), recording)
    assert [index for index, _ in line] == [t.index for t in recording.turns]
    assert all(0 < value < 1 for _, value in line)
    assert line == vm.estimate_battle(vm.default_model(), recording)


def test_the_winner_reads_ahead_at_the_end_of_the_imported_battle(imported: Recording) -> None:
    """p2 won the imported battle with three Pokémon to p1's one at the last decision."""
    line = vm.estimate_battle(vm.default_model(), imported)
    assert imported.result.winner == "p2" and line[-1][1] < 0.25


# --------------------------------------------------------------------------------------------------- in a browser
ESTIMATE_CHART = "document.querySelector('#wc-replays-rescores .wc-estimate svg.wc-an-chart')"
VIEW = "document.querySelector('#wc-replays-viewer')"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")
def test_in_the_app_the_estimate_follows_the_shown_decision_and_a_phone_shows_the_battle_first(server) -> None:
    with Browser() as browser:
        open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
        browser.wait_for(f"{ESTIMATE_CHART} != null", timeout=60)
        assert LABEL in browser.evaluate("document.querySelector('#wc-replays-rescores').textContent")
        assert browser.evaluate(f"{ESTIMATE_CHART}.querySelectorAll('polyline.wc-an-estimate').length") == 1
        xs = browser.evaluate(f"Object.fromEntries({ESTIMATE_CHART}.dataset.xs.split(',').map(p => p.split(':')))")
        cursor = f"Number({ESTIMATE_CHART}.querySelector('.wc-an-cursor').getAttribute('x1'))"
        browser.wait_for(f"{cursor} === {float(xs['0'])}")
        for kind in ("keyDown", "keyUp"):  # → : the next decision, and the cursor with it
            browser.call("Input.dispatchKeyEvent", type=kind, key="ArrowRight", code="ArrowRight",
                         windowsVirtualKeyCode=39, nativeVirtualKeyCode=39)
        browser.wait_for(f"{cursor} === {float(xs['1'])}")
    with Browser(width=414, height=900) as phone:
        phone.call("Emulation.setDeviceMetricsOverride", width=414, height=900, deviceScaleFactor=1, mobile=True)
        open_replay(phone, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
        phone.wait_for(f"{ESTIMATE_CHART} != null", timeout=60)
        board = phone.evaluate(f"{VIEW}.querySelector('.wc-view').getBoundingClientRect().top")
        card = phone.evaluate(f"{ESTIMATE_CHART}.getBoundingClientRect().top")
        assert board < card  # the battle first, its estimate after it
