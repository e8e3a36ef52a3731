"""Digits read from files and links are ASCII digits (issue 28, item 6). ``'²'.isdigit()`` is true and ``int('²')``
raises, so every reader of digits it did not write goes through ``wolfeclick.digits``: a stray temporary file cannot
end ``record`` with a bug (losing the battle just played), and a step or share link of ``²``/``①`` is one line, never
"This is a bug"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wolfeclick.cli import main
from wolfeclick.digits import ascii_int, is_ascii_digits
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.library import Library
from wolfeclick.ui.presentation import InputError, int_param, parse_step
from wolfeclick.ui.tabs.api import replay_turn

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"
NOT_ASCII = ["²", "①", "٣", "²³", "1²", "１", "", " 1", "+1", "1_0"]


@pytest.mark.parametrize("text", NOT_ASCII)
def test_only_ascii_digits_are_a_number(text: str) -> None:
    assert ascii_int(text) is None and not is_ascii_digits(text)


def test_ascii_numbers_and_their_bounds() -> None:
    assert ascii_int("0") == 0 and ascii_int("007") == 7 and ascii_int("-12", signed=True) == -12
    assert ascii_int("-12") is None and ascii_int("-", signed=True) is None
    assert ascii_int("9" * 18) == 10**18 - 1 and ascii_int("9" * 19) is None and ascii_int("9" * 30, 30) is not None
    assert ascii_int(12) is None and ascii_int(None) is None


@pytest.mark.parametrize("stray", [".x.json.²³.abcd.tmp", ".x.json." + "9" * 30 + ".abcd.tmp", ".x.json.①.ab.tmp"])
def test_record_survives_a_stray_temporary_with_odd_digits(stray: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / stray).write_bytes(b"")
    code = main(["record", "--p1", "random", "--p2", "maxdamage", "--seed", "3", "--max-turns", "3",
                 "--out", str(out)])
    printed = capsys.readouterr().out.split()
    assert code == 0
    saved = [Path(p) for p in printed if p.endswith(".json")]
    assert len(saved) == 1 and saved[0].is_file()
    assert (out / stray).exists()  # not ours to remove: its "pid" is not a process id


@pytest.fixture()
def ctx(tmp_path: Path) -> AppContext:
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(SAMPLE, library / SAMPLE.name)
    return AppContext(library=Library(library), results=tmp_path / "results")


@pytest.mark.parametrize("step", ["²", "①", "٣", "1²"])
def test_replay_turn_with_a_non_ascii_step_is_one_line(step: str, ctx: AppContext) -> None:
    with pytest.raises(InputError):
        parse_step(step)
    out = replay_turn(ctx, SAMPLE.stem, step)
    assert set(out) == {"error"} and "bug" not in out["error"].lower() and "\n" not in out["error"]
    assert "step must be a whole number" in out["error"]


def test_a_share_link_turn_of_superscript_two_falls_back() -> None:
    assert int_param("²") is None and int_param("①") is None and int_param("12") == 12
    assert json.dumps(int_param("%C2%B2")) == "null"
