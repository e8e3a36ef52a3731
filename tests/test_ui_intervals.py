"""The Compare and Leaderboard tabs show the same rating intervals, open ends included, as the CLI prints (issue
29, item 2). A real tournament is played into the app's folders; the CLI's tables (``bench --resume``, which plays
nothing more, and ``leaderboard``) are compared cell by cell with what the running app returns for its tabs
(gradio_client, the calls the tabs' buttons make) and with the Leaderboard table a real browser renders."""

from __future__ import annotations

import asyncio
import re

import pytest

from devkit.appserver import app_client
from devkit.browser import CHROMIUM, Browser
from wolfeclick.arena.results import game_results
from wolfeclick.arena.schedule import TournamentConfig
from wolfeclick.arena.standings import summary_from_rows
from wolfeclick.arena.tournament import load_results, run_tournament, tournament_dir
from wolfeclick.cli import main
from wolfeclick.ui.tabs.compare import LOAD_OUTPUTS

FORMAT = "gen8randombattle"  # not gen9: test_ui_leaderboard wants the gen9 tournaments to itself
CONFIG = TournamentConfig(players=("random", "heuristic"), pairs=2, format=FORMAT, seed=2929)


@pytest.fixture(scope="module")
def played(server):
    summary = asyncio.run(run_tournament(CONFIG, server.results, concurrency=2, recordings_dir=server.recordings))
    assert summary.complete
    # a newcomer with one battle played here: a separated record (won or lost), so its rating has an open end
    assert main(["record", "--p1", "maxdamage", "--p2", "random", "--format", FORMAT, "--seed", "7",
                 "--out", str(server.recordings)]) == 0
    return server


@pytest.fixture(scope="module")
def client(played):
    return app_client(played.url)


def _cells(text: str) -> dict[str, str]:
    """policy → its "rating [low, high]" cell, from a CLI table (the lines before the first blank one). Columns
    are two or more spaces apart; a name may hold single spaces (the hostile sample's does)."""
    head, _, *body = text.split("\n\n")[0].splitlines()
    names = re.split(r"\s{2,}", head)
    rows = [re.split(r"\s{2,}", line) for line in body]
    return {cols[0]: cols[names.index("rating [95% CI]")] for cols in rows if len(cols) == len(names)}


def _data(value):
    return value["data"] if isinstance(value, dict) else value


def test_compare_tab_shows_the_clis_interval_cells(client, played, capsys):
    capsys.readouterr()
    assert main(["bench", "--players", "random,heuristic", "--pairs", "2", "--format", FORMAT, "--seed", "2929",
                 "--out", str(played.results), "--resume"]) == 0
    cli = _cells(capsys.readouterr().out)
    assert set(cli) == {"random", "heuristic"}
    loaded = dict(zip(LOAD_OUTPUTS, client.predict(CONFIG.id, api_name="/compare_load")))
    shown = {row[0]: f"{row[7]} {row[8]}" for row in _data(loaded["table"])}
    assert shown == cli
    _, rows = load_results(tournament_dir(played.results, CONFIG))
    summary = summary_from_rows(rows, CONFIG)
    opened = any(row.rating_open for row in summary.table)
    assert opened == any("open" in cell for cell in shown.values())  # open ends exactly where the data leave them
    assert opened == (len({g.winner for g in game_results(rows)}) == 1)  # … i.e. one side won every battle


def test_leaderboard_tab_shows_the_clis_interval_cells(client, played, capsys):
    capsys.readouterr()
    assert main(["leaderboard", "--results", str(played.results), "--recordings", str(played.recordings),
                 "--min-battles", "1"]) == 0
    cli = _cells(capsys.readouterr().out.split("\n\n", 1)[1])
    out = client.predict("all", "", [], 1, "tournament", None, api_name="/leaderboard_refresh")
    shown = {row[1]: row[6] for row in _data(out[1])}
    assert shown == cli and {"random", "heuristic"} <= set(shown)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")
def test_the_rendered_leaderboard_shows_those_cells(client, played, capsys):
    capsys.readouterr()
    assert main(["leaderboard", "--results", str(played.results), "--recordings", str(played.recordings),
                 "--min-battles", "1"]) == 0
    wanted = sorted(set(_cells(capsys.readouterr().out.split("\n\n", 1)[1]).values()))
    assert wanted  # open ends among them whenever the CLI shows one (the newcomer's separated record, usually)
    with Browser() as browser:
        browser.open(f"{played.url}?tab=leaderboard")
        cells = browser.wait_for(
            "(() => { const t = [...document.querySelectorAll('[role=gridcell]')].map(e => e.textContent.trim());"
            f" return {wanted!r}.every(w => t.includes(w)) ? t : null; }})()", timeout=90)
    assert all(w in cells for w in wanted)  # the ranked and the "too few" tables between them show every cell
