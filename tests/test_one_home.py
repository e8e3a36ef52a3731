"""Shared ideas with one home (issue 32): the prompt profiles live in ``game/`` where env and llm both read them, and
env and interop import nothing of ``wolfeclick.llm`` until a model is loaded."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import wolfeclick

PACKAGE = Path(wolfeclick.__file__).parent
BOTTOM = {"wolfeclick.errors", "wolfeclick.sides", "wolfeclick.settings", "wolfeclick.digits", "wolfeclick.paths"}


def imported(path: Path) -> set[str]:
    """Every ``wolfeclick`` module a file imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("wolfeclick"):
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("wolfeclick")}
    return found


def test_env_and_interop_import_nothing_of_llm() -> None:
    probe = ("import sys, wolfeclick.env, wolfeclick.env.env, wolfeclick.interop.reference_logs\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('wolfeclick.llm'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PACKAGE.parent, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_game_imports_only_game_and_the_bottom_modules() -> None:
    """The prompt profiles moved down to ``game/``: nothing there reaches up, not even lazily."""
    for path in sorted((PACKAGE / "game").glob("*.py")):
        upward = {m for m in imported(path) if m != "wolfeclick"
                  and not any(m == low or m.startswith(f"{low}.") for low in BOTTOM | {"wolfeclick.game"})}
        assert not upward, f"{path.name} imports {sorted(upward)}"


def test_the_profiles_have_one_home() -> None:
    assert not (PACKAGE / "llm" / "prompts.py").exists()
    assert not (PACKAGE / "llm" / "v1_moves.py").exists()
    from wolfeclick.game.prompts import PROFILES

    assert sorted(PROFILES) == ["arena-v1", "wolfeclick-v1"]


def test_openenv_names_a_preset_through_the_public_function() -> None:
    from wolfeclick.interop.reference_logs import _policy

    assert _policy("Atharva2099/openenv-smogon-rl@grpo-qwen3-4b-run2") == "preset:run2"
    assert _policy("someone/else") == "someone/else"
    assert _policy(None) == ""
    assert "PRESETS" not in (PACKAGE / "interop" / "reference_logs.py").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------ one team-HP mean
# The four team-HP means as they were written before they had one home (game/reward, game/snapshot, ui/view twice):
# the shared one must give the very same floats, summation order and rounding included.
def old_reward_mean(fractions: list[float], fainted: list[bool]) -> float:
    values = [0.0 if f else max(0.0, min(1.0, float(x))) for x, f in zip(fractions, fainted)][:6]
    return 100.0 * (sum(values) + (6 - len(values))) / 6


def old_snapshot_mean(percents: list[float]) -> float:
    known = percents[:6]
    return round((sum(known) + 100.0 * (6 - len(known))) / 6, 1)


def old_public_mean(levels: list[int]) -> float:
    values = levels[:6] + [100] * (6 - len(levels[:6]))
    return round(sum(values) / 6.0, 2)


def old_end_mean(levels: list[float]) -> float:
    return round(sum(levels) / 6.0 + 100.0 * (6 - len(levels)) / 6.0, 2)


def _snapshots():  # type: ignore[no-untyped-def]
    from devkit.samples import SAMPLES
    from wolfeclick.battle.store import load_recording
    from wolfeclick.ui.battle_panels import BattleView

    recordings = SAMPLES
    assert recordings
    for path in recordings:
        recording = load_recording(path)
        view = BattleView.of(recording)
        for record in recording.turns:
            yield from ((snap, "recorded") for snap in record.snapshot.values())
        for shown in view._shown:
            yield from ((snap, "shown") for snap in shown.values() if snap is not None)
        yield from ((snap, "end") for snap in view._end.values() if snap is not None)


def test_there_is_one_team_hp_mean() -> None:
    sources = {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
               for path in sorted(PACKAGE.rglob("*.py"))}
    homes = [name for name, text in sources.items() if "def mean_team_hp" in text]
    assert homes == ["game/state.py"]
    divides = re.compile(r"/ (6\b|6\.0|TEAM_SLOTS|slots)")
    assert [name for name, text in sources.items() if divides.search(text)] == ["game/state.py"]


def test_the_one_mean_gives_the_old_floats_on_real_recordings() -> None:
    from wolfeclick.game.reward import reward_view
    from wolfeclick.game.state import mean_team_hp
    from wolfeclick.ui.battle_panels import public_team_hp
    from wolfeclick.ui.narrate import public_hp

    kinds = set()
    for snap, kind in _snapshots():
        kinds.add(kind)
        hp, fainted = [m.hp for m in snap.team], [m.fainted for m in snap.team]
        if kind == "recorded":  # what the runner wrote: the snapshot's mean of one-decimal percents
            assert snap.team_hp == old_snapshot_mean(hp) == round(mean_team_hp(hp), 1)
        if kind != "recorded":  # the view's snapshots brought forward along the log
            assert snap.team_hp == old_end_mean([0.0 if f else h for h, f in zip(hp, fainted)])
        assert public_team_hp(snap) == old_public_mean([0 if f else public_hp(h) for h, f in zip(hp, fainted)])
        mons = [type("Mon", (), {"fainted": f, "current_hp_fraction": h / 100.0})() for h, f in zip(hp, fainted)]
        battle = type("Battle", (), {"team": dict(enumerate(mons)), "opponent_team": {}, "active_pokemon": None})()
        assert reward_view(battle).own_team_hp == old_reward_mean([h / 100.0 for h in hp], fainted)
    assert kinds == {"recorded", "shown", "end"}


def test_the_one_mean_gives_the_old_floats_for_short_and_long_teams() -> None:
    """Team-preview formats play fewer than six; the mean still counts six slots, unseen ones full."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from wolfeclick.game.state import mean_team_hp

    tenths = st.integers(0, 1000).map(lambda n: n / 10)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(tenths, max_size=8), st.lists(st.integers(0, 100), max_size=8),
           st.lists(st.floats(0, 1), max_size=8))
    def check(percents: list[float], levels: list[int], fractions: list[float]) -> None:
        assert round(mean_team_hp(percents), 1) == old_snapshot_mean(percents)
        assert round(mean_team_hp(levels), 2) == old_public_mean(levels)
        assert mean_team_hp(fractions, full=1.0) == old_reward_mean(fractions, [False] * len(fractions))
        if len(percents) <= 6:
            assert round(mean_team_hp(percents), 2) == old_end_mean(percents)

    check()


# ------------------------------------------------------------------------------------ one home for shared fixtures
def test_test_modules_import_no_other_test_module_and_helpers_hold_no_fixtures() -> None:
    """Shared fixtures are in ``tests/conftest.py``; plain helpers in non-test modules beside it."""
    root = PACKAGE.parent
    for path in sorted([*(root / "tests").glob("*.py"), *(root / "scripts").glob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            assert not [n for n in names if n.split(".")[-1].startswith("test_")], f"{path.name} imports {names}"
        if path.parent.name == "tests" and not path.name.startswith("test_") and path.name != "conftest.py":
            assert "pytest.fixture" not in path.read_text(encoding="utf-8"), f"{path.name} defines a fixture"
