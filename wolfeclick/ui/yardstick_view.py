"""The reference ladder as the Leaderboard tab shows it: a small read-only table per format. Pure HTML, no Gradio.

The table is the one shipped with the package (``arena/reference_ladder.json``); its rung names are package data,
escaped all the same. Open interval ends read "open", as everywhere else.
"""

from __future__ import annotations

from html import escape

from wolfeclick.arena.gauntlet import GauntletResult, Step
from wolfeclick.arena.intervals import rating_text
from wolfeclick.arena.yardstick import FormatTable, ReferenceLadder, RungEntry

__all__ = ["ladder_html", "unavailable_html", "shipped_html", "step_markdown", "gauntlet_markdown"]


def _rating(rung: RungEntry) -> str:
    low = rung.low if rung.low is not None else rung.rating
    high = rung.high if rung.high is not None else rung.rating
    return rating_text(rung.rating, low, high, rung.open)


def ladder_html(ladder: ReferenceLadder) -> str:
    """Per format, each rung's rating with its 95% interval (relative to the anchor), battles and score, and one
    line on what the scale is and how to be put on it."""
    parts = ['<div class="wc-yardstick">',
             f"<p>The reference ladder: fixed opponents rated together on one scale, {escape(ladder.anchor)} = "
             f"{ladder.anchor_rating:.0f} (Bradley–Terry; {ladder.level:.0%} intervals relative to "
             f"{escape(ladder.anchor)}). It ships with the package, so a rating on it means the same on every "
             "machine; <code>wolfeclick gauntlet SPEC --format F</code> puts any policy on it "
             "(docs/yardstick.md).</p>"]
    for table in ladder.formats.values():
        extra = f" ({table.extra_pairs} for the slower rungs)" if table.extra_pairs else ""
        parts.append(f"<table class='wc-yardstick-table'><caption>{escape(table.format)}: {table.battles} battles, "
                     f"{table.pairs} seat-swapped pairs per pairing{extra}</caption>"
                     "<tr><th>rung</th><th>rating [95% CI]</th><th>battles</th><th>score</th></tr>")
        for rung in table.rungs:
            parts.append(f"<tr><td>{escape(rung.spec)}</td><td>{escape(_rating(rung))}</td>"
                         f"<td>{rung.battles}</td><td>{rung.score:.3f}</td></tr>")
        parts.append("</table>")
    parts.append(f'<p class="wc-muted">Played by {escape(ladder.simulator)} and {escape(ladder.poke_env)}; '
                 f"rebuilt by <code>{escape(ladder.command)}</code>.</p></div>")
    return "".join(parts)


def _md(text: str) -> str:
    """A policy spec as Markdown code (it may come from a visitor's choice: no Markdown or HTML gets through)."""
    return "`" + escape(text.replace("`", "'")) + "`"


def step_markdown(spec: str, steps: list[Step], cap: int) -> str:
    """The Compare tab's line while a gauntlet plays: the rung just played and the estimate so far."""
    if not steps:
        return f"Rating {_md(spec)} on the reference ladder…"
    last = steps[-1]
    return (f"Rating {_md(spec)}: played {_md(last.rung)}; {escape(last.estimate.text())} after "
            f"{last.estimate.battles} of at most {cap} battles…")


def gauntlet_markdown(result: GauntletResult, table: FormatTable) -> str:
    """The finished gauntlet: the rating on the fixed scale, its interval, the battles, why it stopped, and the
    record against each rung played."""
    why = {"width": f"its 95% interval is narrower than {result.width:g}", "cap": "the battle cap was reached",
           "stopped": "it was stopped"}[result.stopped_by]
    shipped = table.ratings()
    lines = [f"**{_md(result.spec)}: {escape(result.estimate.text())}** on the reference ladder "
             f"({escape(result.format)}, {escape(result.anchor)} = {result.anchor_rating:.0f}; 95% interval), "
             f"{result.estimate.battles} battles; it stopped because {why}.", "",
             "| rung | its rating | battles | score |", "| --- | --- | --- | --- |"]
    for rung, (n, points) in sorted(result.record.items(), key=lambda item: shipped.get(item[0], 0.0)):
        lines.append(f"| {_md(rung)} | {shipped.get(rung, float('nan')):.0f} | {n} | {points / n:.3f} |")
    return "\n".join(lines)


def unavailable_html(reason: str) -> str:
    """What the tab shows when the shipped table cannot be read (a broken install): the one line why."""
    return f'<div class="wc-yardstick"><p>⚠ The reference ladder could not be read: {escape(reason)}</p></div>'


def shipped_html() -> str:
    """The shipped table's HTML (the one read of package data here), or the line why it could not be read."""
    from wolfeclick.arena.yardstick import load_ladder
    from wolfeclick.errors import InputError

    try:
        return ladder_html(load_ladder())
    except (InputError, OSError) as exc:
        return unavailable_html(str(exc))
