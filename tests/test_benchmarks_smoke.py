"""Every benchmark in benchmarks/ runs end to end at its smallest size, writes one result and renders its section.
They play real battles (the tiers: tests/conftest.py), so they are not in `make test-fast`."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import harness


def _run(name: str, argv: list[str], results: Path) -> harness.Result:
    import importlib

    module = importlib.import_module(f"benchmarks.{name}")
    assert module.main([*argv, "--results", str(results)]) == 0
    result = harness.latest(name, results)
    assert result is not None and result.run.wall_s > 0 and result.run.cpu_s > 0
    assert result.command.startswith(f".venv/bin/python -m benchmarks.{name} ")
    heading, text = harness.render(name, result)
    assert text.startswith(heading + "\n") and "Machine: " in text
    return result


def test_leaderboard_smallest(tmp_path: Path) -> None:
    result = _run("leaderboard", ["--rows", "10", "--repeats", "1", "--pairs", "1"], tmp_path)
    assert result.results["played"] == 6 and result.results["rows"] == 12 and result.results["tournaments"] == 2


def test_tournament_smallest(tmp_path: Path) -> None:
    result = _run("tournament", ["--pairs", "1", "--repeats", "1", "--concurrency", "1"], tmp_path)
    assert result.results["battles"] == 6 and [row["concurrency"] for row in result.results["rows"]] == [1]
    from wolfeclick.arena import tournament

    # the layer's functions were timed through wrappers while measuring, and are its own again
    assert all(getattr(tournament, name).__module__.startswith("wolfeclick.") for name in ("result_row", "_persist"))


@pytest.mark.torch
def test_rescore_smallest(tmp_path: Path) -> None:
    result = _run("rescore", ["--battles", "1", "--max-turns", "4", "--concurrency", "1"], tmp_path)
    rows = result.results["rows"]
    assert [row["asked"] for row in rows] == ["replay only (random asked)", "tiny checkpoint, score mode"]
    assert all(row["decisions"] > 0 for row in rows)


def test_sim_policies_smallest(tmp_path: Path) -> None:
    result = _run("sim_policies", ["--battles", "1", "--python", "1"], tmp_path)
    assert [(row["side"], row["battles"]) for row in result.results["rows"]] == [("sim", 1)] * 3 + [("python", 1)] * 3


def test_value_model_smallest(tmp_path: Path) -> None:
    result = _run("value_model", ["--battles", "1", "--repeats", "1", "--cold", "1"], tmp_path)
    assert len(result.results["rows"]) == 4 + 2 + 1 and len(result.results["cold"]["runs"]) == 1


def test_recording_size_smallest(tmp_path: Path) -> None:
    result = _run("recording_size", ["--battles", "1", "--repeats", "1", "--formats", "gen9randombattle"], tmp_path)
    [row] = result.results["rows"]
    assert row["battles"] == 1 and 0 < row["gzip_bytes"] < row["plain_bytes"]


def test_ladder_smallest(tmp_path: Path) -> None:
    result = _run("ladder", ["--battles", "1", "--repeats", "1", "--lean"], tmp_path)
    runs = result.results["runs"]
    assert [len(runs["embedded"]), len(runs["ladder"])] == [1, 1] and all(run[1] > 0 for run in runs["ladder"])


def test_simulator_smallest(tmp_path: Path) -> None:
    result = _run("simulator", ["--k", "1", "--processes", "1", "--concurrency", "8", "--seed", "1"], tmp_path)
    r = result.results
    # every rollout replayed by Showdown alone ended with the winner the analysis saw (else the run fails)
    assert [r["options"]["alone"][-1]["rollouts"], r["pass"]["alone"][-1]["rollouts"]] == [r["choices"] + 1,
                                                                                          r["decisions"]]


def test_analysis_smallest(tmp_path: Path) -> None:
    result = _run("analysis", ["--k", "1", "--compare-k", "1", "--processes", "1", "--seed", "13"], tmp_path)
    r = result.results
    assert r["lean"]["rollouts"] == r["lean"]["decisions"] and r["lean"]["options_s"] > 0
    assert all(r[name]["rollouts"] == r["lean"]["decisions"] for name in ("lean-fork", "lean-replay", "full-fork"))


def test_analysis_full_smallest(tmp_path: Path) -> None:
    result = _run("analysis_full", ["--k", "1", "--seed", "13"], tmp_path)
    assert [result.results[name]["rollouts"] for name in ("fork", "replay")] == [result.results["fork"]["decisions"]] * 2


def test_racing_live_smallest(tmp_path: Path) -> None:
    result = _run("racing_live", ["--k", "1", "--processes", "1", "--seed", "13"], tmp_path)
    rows = result.results["rows"]
    assert len(rows) == 7 and all(row["rollouts"] > 0 for row in rows)


def test_racing_smallest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(tmp_path / "cache")
    result = _run("racing", ["--battles", "0", "1", "--k", "2", "--processes", "1", "--cache", cache], tmp_path)
    r = result.results
    assert len(r["battles"]) == 1 and 1 <= r["decisions"] <= 3 and len(r["variants"]) == 5
    assert all(v["racing_rollouts"] <= v["uniform_rollouts"] == 2 * r["options"] for v in r["variants"])
    from benchmarks import racing

    # a cache against itself: the same verdicts everywhere (and nothing played again)
    assert racing.main(["--battles", "0", "1", "--k", "2", "--cache", cache, "--against", cache]) == 0
    n = r["decisions"]
    assert f"same best option {n}/{n}, same mistake verdict {n}/{n}" in capsys.readouterr().out


@pytest.mark.process
def test_env_smallest(tmp_path: Path) -> None:
    result = _run("env", ["--battles", "1", "--repeats", "1", "--in-flight", "1", "--server-battles", "1"], tmp_path)
    [row] = result.results["rows"]
    # the env and the runner played the same battle (else the run fails), and so did both transports
    assert row["steps"] > 0 and [s["transport"] for s in result.results["server"]] == ["HTTP", "WebSocket"]
    assert len({s["steps"] for s in result.results["server"]}) == 1


@pytest.mark.process
def test_env_server_memory_smallest(tmp_path: Path) -> None:
    result = _run("env_server_memory", ["--episodes", "2", "--max-turns", "1", "--every", "1"], tmp_path)
    assert [p["episode"] for p in result.results["series"]] == [0, 1, 2] and result.results["steps"] > 0


@pytest.mark.torch
def test_llm_smallest(tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    try:
        result = _run("llm", ["--shape", "tiny", "--device", "cpu", "--decisions", "3", "--warmup", "1", "--batch", "4",
                              "--threads", "1", "--skip-hf", "--workdir", str(tmp_path / "model")], tmp_path)
    finally:
        torch.set_num_threads(threads)
    report = result.results
    results = report["results"]
    assert {"score", "score x4", "generate", "generate x4", "batcher x4"} <= set(results)
    assert report["score_check_max_abs_diff"] < 1e-4
    assert report["score_not_slower_than_generate"] in (True, False)  # timed: reported, not asserted here
    assert results["batcher x4"]["mean_batch"] >= 1.0


@pytest.mark.ray
def test_ray_tournament_smallest(tmp_path: Path) -> None:
    result = _run("ray_tournament", ["--pairs", "1", "--repeats", "1", "--concurrency", "2", "--workers", "1"], tmp_path)
    r = result.results
    # every run's results.jsonl was byte-identical (else the run fails)
    assert r["battles"] == 6 and set(r["best"]) == {"local", "ray"} and [s["count"] for s in r["scale"]] == [1]


def test_import_logs_smallest(tmp_path: Path) -> None:
    result = _run("import_logs", ["--n", "2", "--server-n", "2", "--distinct", "1", "--workers", "2"], tmp_path)
    rows = result.results["rows"]
    assert [(row["files"], row["output"]) for row in rows] == [
        ("protocol logs", "–"), ("protocol logs", "same bytes"), ("server logs", "–"), ("server logs", "same bytes")]
    assert all(row["result"].startswith(f"imported {row['n']} of {row['n']} files") for row in rows)
    assert "re-simulated 2 server logs" in rows[-1]["result"]
