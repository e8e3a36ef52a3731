"""The LLM decoding benchmark at Qwen3-4B's shape on a GPU: ``benchmarks.llm --shape 4b`` writes its results under
this name, and this module renders them ("LLM decisions: 4b shape on cuda").

    .venv/bin/python -m benchmarks.llm_4b --quant nf4 --batch 16       # = benchmarks.llm --shape 4b …

Not yet in ``harness.BENCHMARKS``: no GPU machine has run it (the section says so by hand); add the name there with
the first result under ``benchmarks/results/`` so that ``python -m benchmarks`` renders it.
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import harness, llm

NAME = "llm_4b"
HEADING = "## LLM decisions: 4b shape on cuda"


def render(result: harness.Result) -> str:
    return llm.section(HEADING, result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return llm.main(["--shape", "4b", *argv])


if __name__ == "__main__":
    raise SystemExit(main())
