"""The yardstick (issue 61): the reference ladder's table, a policy's rating against rungs held fixed, the gauntlet
that plays for it, and the shipped table. The math is checked against what it must equal (closed forms, the
likelihood it maximises, the Bradley–Terry fit it extends); the commands play real battles, a few."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfeclick.arena.ratings import ELO_PER_NAT, bradley_terry
from wolfeclick.arena.stats import GameResult
from wolfeclick.arena.yardstick import (
    ANCHOR,
    ANCHOR_RATING,
    BASE_RUNGS,
    LADDER_FORMATS,
    ReferenceLadder,
    RungGame,
    choose_rung,
    ladder_rungs,
    ladder_table,
    load_ladder,
    parse_ladder,
    rate_on_ladder,
    start_rating,
)
from wolfeclick.errors import InputError

RUNGS = {"random": 1000.0, "maxdamage": 1250.0, "heuristic": 1600.0}
CHI2_95 = 3.841458820694124


def _loglik(x: float, games: list[RungGame], ratings: dict[str, float], centre: float) -> float:
    """The penalised log-likelihood `rate_on_ladder` maximises, written out game by game."""

    def log_p(d: float) -> float:
        return -math.log1p(math.exp(-d / ELO_PER_NAT))

    total = sum(g.score * log_p(x - ratings[g.rung]) + (1 - g.score) * log_p(ratings[g.rung] - x) for g in games)
    return total + 0.5 * log_p(x - centre) + 0.5 * log_p(centre - x)


def _games(spec: list[tuple[str, float]]) -> list[RungGame]:
    """Games in seat-swapped pairs: consecutive games share a pair."""
    return [RungGame(rung, f"p{k // 2}", score) for k, (rung, score) in enumerate(spec)]


scores = st.sampled_from([0.0, 0.5, 1.0])
game_lists = st.lists(st.tuples(st.sampled_from(sorted(RUNGS)), scores), min_size=1, max_size=40)


# ------------------------------------------------------------------------------------------------- rating vs rungs
@given(st.integers(1, 60), st.data())
@settings(max_examples=40, deadline=None)
def test_one_rung_rating_is_the_closed_form(n: int, data: st.DataObject) -> None:
    """Against one rung, with the prior's drawn game against that same rung, the maximum is where the expected
    score equals the score plus the half game: x = r + 400 log10((s + ½) / (n − s + ½))."""
    wins = data.draw(st.integers(0, n))
    games = _games([("maxdamage", 1.0)] * wins + [("maxdamage", 0.0)] * (n - wins))
    est = rate_on_ladder(games, {"maxdamage": 1250.0}, centre=1250.0)
    assert est.rating == pytest.approx(1250.0 + 400.0 * math.log10((wins + 0.5) / (n - wins + 0.5)), abs=1e-6)
    assert est.battles == n


@given(game_lists)
@settings(max_examples=60, deadline=None)
def test_the_rating_maximises_the_likelihood_and_the_interval_is_at_least_the_likelihood_ratio_one(
        spec: list[tuple[str, float]]) -> None:
    games = _games(spec)
    centre = start_rating(RUNGS)
    est = rate_on_ladder(games, RUNGS, centre)
    top = _loglik(est.rating, games, RUNGS, centre)
    for step in (-1.0, 1.0, -10.0, 10.0):
        assert _loglik(est.rating + step, games, RUNGS, centre) <= top + 1e-9
    assert est.low <= est.rating <= est.high
    # every point with 2 Δℓ below χ²₁(95%) is inside: the ends are at least as wide as the likelihood-ratio ends
    for end, outward in ((est.low, -1.0), (est.high, 1.0)):
        assert 2 * (top - _loglik(end + outward * 1e-3, games, RUNGS, centre)) >= CHI2_95 - 1e-4
    points = sum(s for _, s in spec)
    assert (est.open is None) == (0 < points < len(spec))


@given(game_lists, st.randoms(use_true_random=False))
@settings(max_examples=30, deadline=None)
def test_the_rating_does_not_depend_on_the_order_of_the_games(spec: list[tuple[str, float]], rng: random.Random) -> None:
    games = _games(spec)
    shuffled = list(games)
    rng.shuffle(shuffled)
    assert rate_on_ladder(shuffled, RUNGS, 1250.0) == rate_on_ladder(games, RUNGS, 1250.0)


@given(game_lists)
@settings(max_examples=40, deadline=None)
def test_turning_a_loss_into_a_win_raises_the_rating(spec: list[tuple[str, float]]) -> None:
    losses = [k for k, (_, s) in enumerate(spec) if s < 1.0]
    if not losses:
        return
    better = list(spec)
    better[losses[0]] = (spec[losses[0]][0], 1.0)
    assert rate_on_ladder(_games(better), RUNGS, 1250.0).rating > rate_on_ladder(_games(spec), RUNGS, 1250.0).rating


def test_a_policy_that_never_lost_is_open_above_and_never_narrow_enough() -> None:
    est = rate_on_ladder(_games([("heuristic", 1.0)] * 20), RUNGS, 1250.0)
    assert est.open == "above" and est.width == math.inf and "open]" in est.text()
    est = rate_on_ladder(_games([("random", 0.0)] * 20), RUNGS, 1250.0)
    assert est.open == "below" and est.text().split()[1] == "[open,"


def test_more_games_at_the_same_score_narrow_the_interval() -> None:
    few = rate_on_ladder(_games([("maxdamage", 1.0), ("maxdamage", 0.0)] * 10), RUNGS, 1250.0)
    many = rate_on_ladder(_games([("maxdamage", 1.0), ("maxdamage", 0.0)] * 80), RUNGS, 1250.0)
    assert few.rating == pytest.approx(1250.0) and many.rating == pytest.approx(1250.0)
    assert many.width < few.width / 2.0 + 10.0


def test_games_against_a_rung_the_ladder_does_not_rate_are_refused() -> None:
    with pytest.raises(ValueError, match="nope"):
        rate_on_ladder(_games([("nope", 1.0)]), RUNGS, 1250.0)
    with pytest.raises(ValueError, match="score"):
        RungGame("random", "p0", 0.7)


# ------------------------------------------------------------------------------------------------ choosing a rung
def test_the_gauntlet_starts_in_the_middle_and_moves_to_the_nearest_rung() -> None:
    assert start_rating(RUNGS) == 1250.0
    assert start_rating({"a": 1000.0, "b": 1400.0}) == 1000.0  # the lower middle of an even ladder
    assert choose_rung(1250.0, RUNGS) == "maxdamage"
    assert choose_rung(1500.0, RUNGS) == "heuristic"
    assert choose_rung(1425.0, RUNGS) == "maxdamage"  # halfway: the lower rung
    assert choose_rung(1250.0, RUNGS, exclude=["maxdamage"]) == "random"
    with pytest.raises(InputError):
        choose_rung(1250.0, {"random": 1000.0}, exclude=["random"])


def test_search_levels_join_the_rungs_once_the_kind_is_registered() -> None:
    assert ladder_rungs(["random", "maxdamage", "heuristic", "human"]) == BASE_RUNGS
    with_search = ladder_rungs(["random", "search", "heuristic"], extra=["py:my.agent:make", "random"])
    assert with_search == (*BASE_RUNGS, "search?level=1", "search?level=2", "search?level=3", "py:my.agent:make")


# ------------------------------------------------------------------------------------------------ the ladder table
def _round_robin(strengths: dict[str, float], pairs: int, seed: int) -> list[GameResult]:
    rng = random.Random(seed)
    names = sorted(strengths)
    games = []
    for k in range(pairs):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                p = 1.0 / (1.0 + 10 ** ((strengths[b] - strengths[a]) / 400.0))
                for first, second in ((a, b), (b, a)):
                    games.append(GameResult(first, second, k, a if rng.random() < p else b))
    return games


def test_the_ladder_table_is_bradley_terry_anchored_with_intervals_around_it() -> None:
    strengths = {"random": 1000.0, "maxdamage": 1250.0, "heuristic": 1600.0}
    games = _round_robin(strengths, 60, 1)
    table = ladder_table(games)
    fitted = bradley_terry(games, anchor=ANCHOR, anchor_rating=ANCHOR_RATING)
    assert [r.spec for r in table] == sorted(fitted, key=lambda p: -fitted[p])
    for row in table:
        assert row.rating == pytest.approx(fitted[row.spec], abs=1e-6)
        assert row.low <= row.rating <= row.high and row.open is None
        assert row.battles == 240
    anchor = next(r for r in table if r.spec == ANCHOR)
    assert anchor.low == anchor.high == anchor.rating == ANCHOR_RATING
    for row in table:  # the simulated truth is inside the intervals (a 95% interval, three rungs, a fixed seed)
        assert row.low <= strengths[row.spec] <= row.high


def test_a_ladder_without_its_anchor_is_refused() -> None:
    with pytest.raises(InputError, match="anchor"):
        ladder_table([GameResult("a", "b", 0, "a"), GameResult("b", "a", 0, "a")])


# --------------------------------------------------------------------------------------------- the shipped table
def test_the_shipped_table_loads_and_rates_both_formats_from_random_up() -> None:
    ladder = load_ladder()
    assert ladder.anchor == ANCHOR and ladder.anchor_rating == ANCHOR_RATING and ladder.level == 0.95
    assert set(LADDER_FORMATS) <= set(ladder.formats)
    for name in LADDER_FORMATS:
        table = ladder.table(name)
        ratings = table.ratings()
        assert set(BASE_RUNGS) <= set(ratings)
        assert ratings["random"] < ratings["maxdamage"] < ratings["heuristic"]
        base = sum(1 for spec in ratings if spec in BASE_RUNGS)
        extra = len(ratings) - base
        assert table.battles == (2 * table.pairs * base * (base - 1) // 2
                                 + 2 * table.extra_pairs * (extra * base + extra * (extra - 1) // 2))
        for rung in table.rungs:
            assert rung.battles == (2 * table.pairs * (base - 1) + 2 * table.extra_pairs * extra
                                    if rung.spec in BASE_RUNGS else 2 * table.extra_pairs * (len(ratings) - 1))
    assert "reference-ladder --rebuild" in ladder.command
    assert parse_ladder(ladder.to_json()) == ladder


def _shipped() -> dict:
    return json.loads(load_ladder().to_json())


@pytest.mark.parametrize("spoil, says", [
    (lambda d: d["formats"]["gen9randombattle"]["rungs"][-1].update(rating=990.0, low=990.0, high=990.0), "anchor"),
    (lambda d: d["formats"]["gen9randombattle"]["rungs"][0].update(low=1e9), "outside its interval"),
    (lambda d: d["formats"]["gen9randombattle"]["rungs"].reverse(), "strongest first"),
    (lambda d: d["formats"]["gen9randombattle"]["rungs"][0].update(low=None), "null exactly when"),
    (lambda d: d["formats"]["gen9randombattle"].update(format="gen8randombattle"), "holds the table"),
    (lambda d: d.update(extra=1), "extra"),
])
def test_a_spoilt_table_is_refused_in_one_line(spoil, says: str, tmp_path: Path) -> None:
    data = _shipped()
    spoil(data)
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=says) as caught:
        load_ladder(path)
    assert "\n" not in str(caught.value)


def test_a_format_the_ladder_does_not_rate_is_one_line() -> None:
    with pytest.raises(InputError, match="no 'gen1ou'.*gen9randombattle"):
        load_ladder().table("gen1ou")


# ----------------------------------------------------------------------------------------- the commands, for real
def test_a_gauntlet_with_a_tiny_cap_rates_on_the_fixed_scale_records_its_battles_and_repeats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wolfeclick.arena.history import scan_history
    from wolfeclick.cli import main

    args = ["gauntlet", "maxdamage", "--format", "gen9randombattle", "--max-battles", "2", "--seed", "7",
            "--results", str(tmp_path / "results"), "--no-recordings", "--concurrency", "2"]
    assert main([*args, "--json", str(tmp_path / "one.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("maxdamage on the reference ladder (gen9randombattle, random = 1000): ")
    assert "2 battles (battle cap reached)" in out
    result = json.loads((tmp_path / "one.json").read_text())
    ladder = load_ladder().table("gen9randombattle").ratings()
    # against the middle rung other than maxdamage itself
    assert [s["battles"] for s in result["steps"]] == [2]  # one step of the one pair the cap allows
    assert result["steps"][0]["rung"] == choose_rung(start_rating({k: v for k, v in ladder.items() if k != "maxdamage"}),
                                                     {k: v for k, v in ladder.items() if k != "maxdamage"})
    assert result["battles"] == 2 and result["stopped_by"] == "cap"
    # the battles are in the history, like every tournament's
    scan = scan_history(tmp_path / "results")
    assert len(scan.entries) == 2 and all("maxdamage" in (e.p1, e.p2) for e in scan.entries)
    assert {e.source for e in scan.entries} == {"tournament"}
    # the same command again: the same battles read back, the same bytes
    assert main([*args, "--json", str(tmp_path / "two.json")]) == 0
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()
    assert len(scan_history(tmp_path / "results").entries) == 2
    # and played afresh elsewhere: the same steps, rungs and battles (deterministic given the seed)
    fresh = [a if a != str(tmp_path / "results") else str(tmp_path / "elsewhere") for a in args]
    assert main([*fresh, "--json", str(tmp_path / "three.json")]) == 0
    assert (tmp_path / "three.json").read_bytes() == (tmp_path / "one.json").read_bytes()


def test_the_gauntlet_refuses_mistakes_in_one_line_before_playing(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from wolfeclick.cli import main

    base = ["gauntlet", "--results", str(tmp_path)]
    assert main([*base, "maxdamage", "--format", "gen1ou"]) == 2
    assert main([*base, "nosuchkind", "--format", "gen9randombattle"]) == 2
    err = capsys.readouterr().err
    assert "no 'gen1ou'" in err and "nosuchkind" in err
    assert not any(tmp_path.iterdir())


FIRST_AGENT = """
from wolfeclick.policies.base import Decision


class First:
    def metadata(self):
        return {"agent": "first-legal"}

    def decide(self, observation):
        allowed = observation.allowed()
        return Decision(action=allowed[0] if allowed else None)
"""


def test_the_reference_ladder_rebuilds_from_its_tournaments_and_keeps_other_formats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Baselines in a round robin of --pairs, an operator's own rung against every rung with --extra-pairs, all
    rated together; a format not rebuilt is kept as it was; the same command again reads the battles back."""
    from wolfeclick.cli import main

    (tmp_path / "yardstick_first.py").write_text(FIRST_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "ladder.json"
    shipped = load_ladder()
    out.write_text(shipped.to_json())
    args = ["reference-ladder", "--rebuild", "--formats", "gen9randombattle", "--rungs", "random,maxdamage",
            "--add", "py:yardstick_first:First", "--pairs", "2", "--extra-pairs", "1", "--seed", "5",
            "--results", str(tmp_path / "results"), "--out", str(out), "--concurrency", "2"]
    assert main(args) == 0
    built = load_ladder(out)
    table = built.table("gen9randombattle")
    ratings = table.ratings()
    assert set(ratings) == {"random", "maxdamage", "py:yardstick_first:First"} and ratings["random"] == 1000.0
    assert [r.spec for r in table.rungs] == sorted(ratings, key=lambda s: -ratings[s])
    # random-maxdamage: 2 pairs; the extra rung against each baseline: 1 pair
    assert (table.battles, table.pairs, table.extra_pairs, table.seed) == (4 + 4, 2, 1, 5)
    assert {r.spec: r.battles for r in table.rungs} == {"random": 6, "maxdamage": 6, "py:yardstick_first:First": 4}
    assert table.extra_tournament is not None and table.extra_tournament != table.tournament
    assert built.formats["gen4randombattle"] == shipped.formats["gen4randombattle"]  # not rebuilt: kept
    assert built.simulator.startswith("pokemon-showdown ") and built.poke_env.startswith("poke-env ")
    assert "--extra-pairs 1" in built.command
    first = out.read_bytes()
    assert main(args) == 0  # played already: read back, the same table to the byte
    assert out.read_bytes() == first
    capsys.readouterr()
    assert main(["reference-ladder", "--out", str(out)]) == 0
    assert "gen9randombattle: 8 battles, 2 pairs per pairing (1 for the slower rungs), seed 5" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- the Leaderboard view
def test_the_leaderboard_view_draws_every_rung_of_every_format_escaped() -> None:
    from wolfeclick.ui.yardstick_view import ladder_html, shipped_html

    ladder = load_ladder()
    html = shipped_html()
    for table in ladder.formats.values():
        assert f"<caption>{table.format}: {table.battles} battles" in html
        for rung in table.rungs:
            assert f"<tr><td>{rung.spec.replace('&', '&amp;')}</td>" in html
    data = json.loads(ladder.to_json())
    data["formats"]["gen9randombattle"]["rungs"][0]["spec"] = "<script>x</script>"
    hostile = ladder_html(ReferenceLadder.model_validate(data))
    assert "<script>" not in hostile and "&lt;script&gt;x&lt;/script&gt;" in hostile


# ------------------------------------------------------------------------------------- the Compare tab's "Rate a policy"
def _rate(ctx, spec: str, cap: int, fmt: str = "gen9randombattle") -> list[str]:
    import asyncio

    from wolfeclick.ui.tabs.rate import RateUI, rate_run

    ui = RateUI(*(f"component-{n}" for n in range(7)))  # type: ignore[arg-type]

    async def collect() -> list[str]:
        return [update[ui.status] async for update in rate_run(ctx, ui, spec, fmt, 150, cap, "3")]

    return asyncio.run(collect())


def test_rate_a_policy_plays_the_gauntlet_for_a_served_policy_and_refuses_the_rest(tmp_path: Path) -> None:
    from wolfeclick.arena.history import scan_history
    from wolfeclick.ui.context import AppContext, Settings
    from wolfeclick.ui.library import Library

    ctx = AppContext(library=Library(tmp_path / "recordings"), results=tmp_path / "results",
                     settings=Settings(max_battles=10), value_model=None)
    shown = _rate(ctx, "maxdamage", 4)
    assert shown[0].startswith("Rating `maxdamage`") and "after 4 of at most 4 battles" in shown[-2]
    assert shown[-1].startswith("**`maxdamage`: ") and "4 battles; it stopped because the battle cap" in shown[-1]
    assert len(scan_history(ctx.results, [ctx.library.directory]).entries) == 4  # in the app's history
    assert ctx.stops.quota is not None and ctx.stops.quota.running() == 0  # the run was let go
    for spec, cap, fmt, says in (("py:os:getcwd", 4, "gen9randombattle", "⚠"), ("maxdamage", 11, "gen9randombattle",
                                 "between 2 and 10"), ("maxdamage", 4, "gen1ou", "no 'gen1ou'")):
        before = sorted(p.name for p in ctx.results.iterdir())
        out = _rate(ctx, spec, cap, fmt)
        assert len(out) == 1 and says in out[0], out
        assert sorted(p.name for p in ctx.results.iterdir()) == before
