"""`analyse` of an imported public replay plays its rollouts from an inferred state, built by the one loader
take-over uses (``interop.takeover.load_inferred_world``, the search policy's ``world``), and says so in the CLI
line, the saved analysis and the app's analysis card (issue 63, item 3)."""

from __future__ import annotations

from pathlib import Path

from wolfeclick.analysis.schema import Analysis
from wolfeclick.battle.store import load_recording
from wolfeclick.cli import main
from wolfeclick.interop import takeover
from wolfeclick.ui.analysis_view import analysis_card

DATA = Path(__file__).resolve().parent / "data" / "interop"
PUBLIC = DATA / "showdown_hostile.log"  # a gen9 random battle's public log, chat and markup lines in it


def _imported(tmp_path: Path, capsys) -> Path:
    assert main(["import", str(PUBLIC), "--out", str(tmp_path)]) == 0
    return Path(capsys.readouterr().out.split()[0])


def test_analyse_of_a_public_replay_starts_from_an_inferred_state(tmp_path: Path, capsys, monkeypatch) -> None:
    path = _imported(tmp_path, capsys)
    recording = load_recording(path)
    loads: list[int] = []
    loader = takeover.load_inferred_world

    async def counted(*args, **kwargs):  # the real loader, counted: the one piece a take-over uses too
        loads.append(args[2])
        return await loader(*args, **kwargs)

    monkeypatch.setattr(takeover, "load_inferred_world", counted)
    argv = ["analyse", str(path), "--k", "2", "--policy", "random", "--seed", "3", "--processes", "1"]
    assert main(argv) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith("(from an inferred state)"), line
    saved = Path(line.split(" (")[-2].rstrip(")"))
    analysis = Analysis.model_validate_json(saved.read_bytes())
    assert analysis.sees == "from an inferred state"
    assert [d.index for d in analysis.decisions] == [t.index for t in recording.turns]
    assert all(d.win.rollouts == 2 for d in analysis.decisions)
    assert sorted(set(loads)) == [t.index for t in recording.turns]  # every decision built by the loader
    first = saved.read_bytes()
    assert main(argv) == 0  # the same seed: the same worlds, the same rollouts, the same bytes
    capsys.readouterr()
    assert saved.read_bytes() == first
    assert "the analysis starts from an inferred state" in analysis_card(analysis, recording)


def test_analyse_of_a_public_replay_refuses_what_it_cannot_do_in_one_line(tmp_path: Path, capsys) -> None:
    path = _imported(tmp_path, capsys)
    assert main(["analyse", str(path), "--k", "1", "--options", "p1"]) == 2
    assert "public replay: its decisions hold no legal actions to value" in capsys.readouterr().err
