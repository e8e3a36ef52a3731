"""devkit.suite_cpu: the suite's CPU by tier, file and test, from what each worker wrote (see its docstring)."""

from __future__ import annotations

import os
from pathlib import Path

from devkit.suite_cpu import summary, tree_cpu


def test_the_summary_counts_each_test_once_in_its_heaviest_tier(tmp_path: Path) -> None:
    (tmp_path / "1.tsv").write_text("tests/test_a.py::one\t3.00\tbattles,browser\n"
                                    "tests/test_a.py::two\t1.00\tfast\n", encoding="utf-8")
    (tmp_path / "2.tsv").write_text("tests/test_b.py::three\t2.00\tbattles\n"
                                    "tests/test_b.py::four\t-0.10\tray\n", encoding="utf-8")
    text = summary(tmp_path)
    assert text.startswith("4 tests, 6 CPU s (floor on 2 cores: 3 s of wall)")
    tiers = [line.split() for line in text.split("by tier:")[1].split("by file:")[0].strip().splitlines()]
    # a negative reading (a process left the tree) counts as none
    assert tiers == [["3.0", "50.0%", "browser"], ["2.0", "33.3%", "battles"], ["1.0", "16.7%", "fast"],
                     ["0.0", "0.0%", "ray"]]
    files = text.split("by file:")[1].split("tests:")[0].split()
    assert files[:4] == ["4.0", "tests/test_a.py", "2.0", "tests/test_b.py"]


def test_the_tree_includes_this_process() -> None:
    before = tree_cpu(os.getpid())
    sum(i * i for i in range(2_000_000))
    assert tree_cpu(os.getpid()) > before
