"""docs/search.md's table of levels is what ``search`` plays: a reader choosing a level reads the budget it gets
(issue 61; the levels were redefined three times, and the table is where a user looks)."""

from __future__ import annotations

from pathlib import Path

from wolfeclick.analysis.search import LEVELS, Budget

DOC = Path(__file__).resolve().parents[1] / "docs" / "search.md"
VALUES = {"HP left": "hp", "standing": "standing"}


def documented_levels(text: str) -> dict[int, Budget]:
    """The rows of the table under "## Levels: strength and cost", as budgets."""
    section = text.split("## Levels: strength and cost", 1)[1]
    levels: dict[int, Budget] = {}
    for line in section.splitlines():
        if not line.startswith("|"):
            if levels:
                break  # the table has ended
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not cells[0][:1].isdigit():
            continue  # its head and the rule under it
        policy = cells[6].strip("`").removeprefix("sim:")
        levels[int(cells[0].split()[0])] = Budget(
            worlds=int(cells[1]), rollouts=int(cells[2]), horizon=int(cells[3]), value=VALUES[cells[4]],
            tera=cells[5] == "yes", policy=policy, foe_policy=policy)
    return levels


def test_the_documented_table_of_levels_is_what_search_plays() -> None:
    assert documented_levels(DOC.read_text(encoding="utf-8")) == LEVELS


def test_the_levels_grow_in_budget() -> None:
    """Each level spends at least what the one below does, in every number (a higher level is never cheaper)."""
    for low, high in zip(sorted(LEVELS)[:-1], sorted(LEVELS)[1:]):
        a, b = LEVELS[low], LEVELS[high]
        assert a.worlds <= b.worlds and a.rollouts <= b.rollouts and a.horizon <= b.horizon
