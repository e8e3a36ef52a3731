"""Replay pages as poke-env saves them (``Player(save_replays=True)``), built here by poke-env's own code
(``Battle._build_replay_html``) from battles played on the real simulator (issue 65, item 14).

Every page poke-env saves carries its template's replay id, ``unregisteredserver-gen8randombattle-320064``, whatever
battle it holds: the importer named every such page after it (a gen9ou battle "gen8randombattle", ids that
depended on import order, different battles one recording once two folders were merged). And a battle forfeited
before its first turn (at team preview) imported with no decision, and the viewer waited for one forever.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from devkit.browser import CHROMIUM, Browser
from devkit.samples import SAMPLES
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.battle.teams import TeamSources, prepare_deal
from wolfeclick.interop.folder import import_files
from wolfeclick.interop.sniff import read_any
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.ui.battle_panels import BattleView

TEAMS = Path(__file__).parent / "data" / "teams" / "gen9ou"
POKE_ENV_TEMPLATE_ID = "unregisteredserver-gen8randombattle-320064"


def poke_env_page(recording: Recording, folder: Path, side: str = "p1", number: int = 1) -> Path:
    """The page poke-env saves for ``side`` of this battle (``save_replays=folder``): a poke-env ``Battle`` given the
    battle's protocol lines as its ``Player`` routes them (``|win|`` → ``won_by``, ``|tie`` → ``tied``, the rest
    → ``parse_message``), which writes ``<username> - <battle tag>.html`` itself when the battle ends; the battle
    tag numbered as a local server numbers its battles."""
    from poke_env.battle import Battle
    from poke_env.player.player import Player

    name = recording.players[side].name
    battle = Battle(f"battle-{recording.format}-{number}", name, logging.getLogger("poke-env-page"),
                    gen=int(recording.format[3]), save_replays=str(folder))
    for line in recording.log:
        parts = line.split("|")
        if len(parts) < 2 or parts[1] in Player.MESSAGES_TO_IGNORE or parts[1] == "request":
            continue
        if parts[1] == "win":
            battle.won_by(parts[2])
        elif parts[1] == "tie":
            battle.tied()
        else:
            try:
                battle.parse_message(parts)
            except Exception:  # noqa: BLE001 - poke-env's player logs and goes on; so does this
                pass
    path = folder / f"{name} - {battle.battle_tag}.html"
    assert POKE_ENV_TEMPLATE_ID in path.read_text(encoding="utf-8")  # what every page poke-env saves says
    return path


class FailsAtFirstDecision:
    """A policy that raises at its first decision: in a team-preview format its side forfeits before turn 1."""

    spec = "fails-first"
    blocking = True

    def metadata(self) -> dict:
        return {}

    def decide(self, observation: Observation) -> Decision:
        raise RuntimeError("no answer")


@pytest.fixture(scope="module")
def preview_forfeit() -> Recording:
    async def go() -> Recording:
        deal = await prepare_deal(TeamSources(team1=sorted(TEAMS.glob("*.txt"))[0],
                                              team2=sorted(TEAMS.glob("*.txt"))[1]), "gen9ou")
        assert deal is not None
        return await play_battle(FailsAtFirstDecision(), make_policy("random"), format_id="gen9ou", seed=5,
                                 teams=deal.infos(5))

    recording = asyncio.run(go())
    assert recording.result.reason == "forfeit" and recording.result.winner == "p2"
    assert "|turn|1" not in recording.log and "|teampreview" in "\n".join(recording.log)  # before turn 1
    return recording


def samples() -> list[Recording]:
    return [load_recording(path) for path in SAMPLES]


def test_poke_env_pages_get_ids_from_their_battles_stable_across_order_and_re_import(tmp_path: Path,
                                                                                      preview_forfeit) -> None:
    battles = [*samples(), preview_forfeit]
    pages = {poke_env_page(battle, tmp_path / "pages", number=number): battle
             for number, battle in enumerate(battles, 1)}
    imported = {path: read_any(path.read_bytes()) for path in pages}
    ids = {path: recording.id for path, recording in imported.items()}
    assert len(set(ids.values())) == len(battles), ids  # one id per battle, not one for all
    for path, recording in imported.items():
        assert recording.format == pages[path].format
        assert recording.id.startswith(f"showdown-{recording.format}-"), recording.id  # names its own format
        assert "unregisteredserver" not in recording.id and "320064" not in recording.id
        assert read_any(path.read_bytes()).id == recording.id  # the same file: the same id

    # the same battle saved again (another local server, numbering its battles afresh): the same id
    first = next(iter(pages))
    again = poke_env_page(pages[first], tmp_path / "again", number=99)
    assert read_any(again.read_bytes()).id == ids[first]

    # import in one order, then in the other, into two folders: the same names; importing again adds nothing
    forward, backward = tmp_path / "a", tmp_path / "b"
    import_files(sorted(pages), forward)
    import_files(sorted(pages, reverse=True), backward)
    names = {p.name for p in forward.glob("*.json")}
    assert names == {p.name for p in backward.glob("*.json")} == {f"{i}.json" for i in ids.values()}
    import_files(sorted(pages), forward)
    assert {p.name for p in forward.glob("*.json")} == names


def test_a_battle_forfeited_at_team_preview_imports_with_its_winner_and_the_view_ends_there(tmp_path: Path,
                                                                                             preview_forfeit) -> None:
    recording = read_any(poke_env_page(preview_forfeit, tmp_path, side="p2").read_bytes())
    assert recording.result.winner == "p2" and not recording.turns, recording.result  # no decision point
    view = BattleView.of(recording)
    assert view.steps >= 1  # the end of the battle is a step even with no decision before it
    page = view.html(view.steps - 1)
    assert "Waiting for the first decision" not in page
    assert "won" in page and ">End<" in page, page


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")
def test_the_viewer_ends_a_battle_forfeited_at_team_preview_with_its_winner(tmp_path: Path, preview_forfeit,
                                                                            server) -> None:
    """It uploaded with no step, and the viewer said "Waiting for the first decision…" forever."""
    recording = read_any(poke_env_page(preview_forfeit, tmp_path).read_bytes())
    (server.recordings / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    with Browser(1280, 800) as browser:
        browser.open(f"{server.url}?replay={recording.id}")
        view = "document.querySelector('#wc-replays-viewer')"
        browser.wait_for(f"window.__wcViewers?.replays?.state.data?.id === {recording.id!r} && "
                         f"{view}.querySelector('.wc-turn') !== null", timeout=90)
        assert browser.evaluate(f"{view}.querySelector('.wc-turn').textContent") == "End"
        text = browser.evaluate(f"{view}.querySelector('.wc-view').innerText")
        assert "won" in text and "Waiting for the first decision" not in text, text
        label = browser.evaluate(f"{view}.querySelector('[data-role=label]').textContent")
        assert label.startswith("End of battle"), label
