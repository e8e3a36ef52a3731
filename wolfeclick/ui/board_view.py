"""How the Leaderboard tab words the standing table and a policy's page: pure functions, no Gradio, no I/O.

Policy names come from recordings, which can be uploaded, so they are untrusted: in tables they are plain-text
cells, in HTML they are escaped, and in links they are percent-encoded (a link's visible text is fixed, never a
name, so no Markdown can be smuggled in). Open interval ends read "open", as in the CLI's table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from wolfeclick.arena.glicko import GLICKO_ORDER_NOTE
from wolfeclick.arena.leaderboard import Leaderboard, LeaderRow, rating_text
from wolfeclick.arena.policy_history import PolicyPage

__all__ = ["TABLE_HEADERS", "MATRIX_HEADERS", "RECORD_HEADERS", "RECENT_HEADERS", "policy_query", "replay_query",
           "rating_text", "table_rows", "too_few_rows", "matrix_rows", "record_rows", "recent_rows", "status_text", "page_html"]

TABLE_HEADERS = ["#", "policy", "battles", "W-L-T", "win rate [95% CI]", "illegal", "rating [95% CI]",
                 "Glicko-2 (RD)", "page"]
MATRIX_HEADERS = ["a", "b", "games", "a wins", "b wins", "ties", "a's score [95% CI]"]
RECORD_HEADERS = ["opponent", "battles", "W-L-T", "score [95% CI]", "page"]
RECENT_HEADERS = ["date", "opponent", "seat", "result", "ended", "turns", "format", "source", "replay"]


def policy_query(policy: str) -> str:
    """The share link's query of a policy's page: ``?policy=NAME`` (percent-encoded)."""
    return "?" + urlencode({"policy": policy}, quote_via=quote, safe="")


def replay_query(battle: str) -> str:
    """The link that opens a battle's replay at its first turn, as the Replays tab reads it."""
    return "?" + urlencode({"replay": battle, "turn": 1})


def _ci(score: float, low: float, high: float) -> str:
    return f"{score:.3f} [{low:.3f}, {high:.3f}]"


def _row(rank: Any, r: LeaderRow) -> list[Any]:
    return [rank, r.policy, r.battles, f"{r.wins}-{r.losses}-{r.ties}", _ci(r.win_rate, r.ci_low, r.ci_high),
            f"{100 * r.illegal_rate:.1f}%", rating_text(r), f"{r.glicko:.0f} ({r.glicko_rd:.0f})",
            f"[page]({policy_query(r.policy)})"]


def table_rows(board: Leaderboard) -> list[list[Any]]:
    """The ranked table, strongest first (rank 1 on top)."""
    return [_row(k, r) for k, r in enumerate(board.rows, 1)]


def too_few_rows(board: Leaderboard) -> list[list[Any]]:
    """The policies with too few battles, unranked ("–"), in the table's order."""
    return [_row("–", r) for r in board.too_few]


def matrix_rows(board: Leaderboard) -> list[list[Any]]:
    return [[c.a, c.b, c.games, c.wins_a, c.wins_b, c.ties, _ci(c.score_a, c.ci_low, c.ci_high)]
            for c in board.matrix]


def record_rows(page: PolicyPage) -> list[list[Any]]:
    return [[r.opponent, r.games, f"{r.wins}-{r.losses}-{r.ties}", _ci(r.score, r.ci_low, r.ci_high),
             f"[page]({policy_query(r.opponent)})"] for r in page.record]


def recent_rows(page: PolicyPage, has_replay: Callable[[str], bool]) -> list[list[Any]]:
    """The page's recent battles; the replay cell links only a battle whose recording the library holds."""
    return [[(b.created or "")[:19].replace("T", " "), b.opponent, b.side, b.result, b.reason, b.turns, b.format,
             b.source, f"[open]({replay_query(b.battle)})" if has_replay(b.battle) else "not in the library"]
            for b in page.recent]


def status_text(board: Leaderboard, entries: int, skipped: Iterable[str], filters: str, unrated: int = 0,
                notes: Iterable[str] = ()) -> str:
    """The tab's one status line: what the table rests on; ``notes`` (the scan's own lines, naming the files it
    refused and the recordings it left out, and why) replace the bare counts when given."""
    anchor = f"{board.anchor} = 1000" if board.anchor else "mean = 1000 (random has not played)"
    text = (f"{board.battles} finished battles of {entries} in the history{filters}; Bradley–Terry, {anchor}; "
            f"{len(board.rows)} ranked, {len(board.too_few)} with fewer than {board.min_battles} battles apart.")
    notes = [str(n) for n in notes]
    if notes:
        return text + " " + " ".join(note.rstrip(".") + "." for note in notes)
    skipped = list(skipped)
    if skipped:
        text += f" {len(skipped)} unreadable file(s) skipped."
    if unrated:
        text += f" {unrated} recording(s) left out: a side's policy is unknown (imported battles)."
    return text + " " + GLICKO_ORDER_NOTE


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        if "path" in value:
            return str(value["path"])
        text = str(value.get("repo", ""))
        if value.get("revision"):
            text += f"@{value['revision']}"
        if value.get("sha"):
            text += f" (sha {str(value['sha'])[:12]})"
        return text
    return "" if value is None else str(value)


CHECKPOINT_FIELDS = (("checkpoint", "checkpoint"), ("base", "base"), ("adapter", "adapter"), ("preset", "preset"),
                     ("profile", "prompt profile"), ("mode", "decoding"), ("quant", "quantisation"),
                     ("implementation", "implementation"))


def missing_page_html(policy: str) -> str:
    """Where a link's policy page would be, when the history has no battles of it (escaped HTML)."""
    return (f'<div class="wc-policy-page"><h3>{escape(policy)}</h3><p>⚠ This link names a policy with no battles '
            "in this history; choose one from the table or the list.</p></div>")


def page_html(page: PolicyPage, share: str) -> str:
    """The page's header (its line in the table) and what its checkpoint is, as escaped HTML."""
    name = escape(page.policy)
    parts = [f'<div class="wc-policy-page"><h3>{name}</h3>']
    r = page.row
    if r is None:
        parts.append("<p>No finished battles in this view of the history.</p>")
    else:
        where = "ranked" if page.ranked else "listed apart (too few battles)"
        parts.append(f"<p>{r.battles} finished battles, {r.wins}-{r.losses}-{r.ties} (W-L-T), win rate "
                     f"{escape(_ci(r.win_rate, r.ci_low, r.ci_high))}; rating {escape(rating_text(r))}; Glicko-2 "
                     f"{r.glicko:.0f} (RD {r.glicko_rd:.0f}); illegal actions {100 * r.illegal_rate:.1f}%; "
                     f"{where}.</p>")
    parts.append(f'<p class="wc-muted">Share this page: <code>{escape(share)}</code></p>')
    parts.append("<table class='wc-checkpoint'><tr><th>spec</th><th>what it resolved to (recorded)</th>"
                 "<th>battles</th></tr>")
    for seen in page.checkpoints:
        details = "; ".join(f"{label}: {escape(_describe(seen.details[key]))}" for key, label in CHECKPOINT_FIELDS
                            if seen.details.get(key) not in (None, "", {}))
        parts.append(f"<tr><td>{name}</td><td>{details or 'not recorded (no recording kept)'}</td>"
                     f"<td>{seen.battles}</td></tr>")
    parts.append("</table></div>")
    return "".join(parts)
