"""A recording → a Showdown replay file (the ``.html`` that Showdown's "Download replay" button saves).

The file layout is Showdown's replay-file format, version 1: a ``replay-wrapper`` holding the hidden ``replayid``
input and the four empty containers the player fills (``battle``, ``battle-log``, ``replay-controls``,
``replay-controls-2``), the protocol log inside ``<script type="text/plain" class="battle-log-data">`` with every
``/`` written as ``\\/`` (so no ``</script>`` can end the block early), a plain-text log readable offline, and the
loader for Showdown's ``replay-embed.js``, which turns the log into the animated replay when the file is opened in a
browser that is online. Nothing here fetches anything; the server only writes text.

The log comes from an untrusted recording, so lines Showdown would render as HTML (``|html|``, ``|raw|``, chat…)
and any line holding ``<`` are dropped; the text log is built from our own narration and escaped.
"""

from __future__ import annotations

import re

from wolfeclick.battle.schema import Recording
from wolfeclick.sides import SIDES
from wolfeclick.ui.battle_panels import esc
from wolfeclick.ui.narrate import Narrator

__all__ = ["replay_file", "safe_log_lines", "REPLAY_EMBED_URL"]

REPLAY_EMBED_URL = "https://play.pokemonshowdown.com/js/replay-embed.js"
_HTML_LINE_TYPES = {"html", "raw", "uhtml", "uhtmlchange", "c", "c:", "chat", "j", "J", "l", "L", "n", "N",
                    "bigerror", "error", "popup", "pm", "notify", "tempnotify", "fieldhtml", "controlshtml", "sentchoice"}
_ID_SAFE = re.compile(r"[^a-z0-9-]")

_STYLE = """
html, body { font-family: Verdana, Helvetica, Arial, sans-serif; font-size: 10pt; margin: 0; padding: 0; }
body { padding: 12px 0; }
.battle-log { font-family: Verdana, Helvetica, Arial, sans-serif; font-size: 10pt; }
.battle-log-inline { border: 1px solid #aab; background: #eef2f5; color: #000; max-width: 640px;
  margin: 0 auto 80px; padding-bottom: 5px; }
.battle-log .inner { padding: 4px 8px 0 8px; }
.battle-log h2 { margin: .5em -8px; padding: 4px 8px; border: 1px solid #aab; border-left: 0; border-right: 0;
  background: #e0e7ea; font-size: 13pt; }
.battle-log .line { margin: 2px 0; }
.subtle { color: #3a4a66; }
""".strip()


def safe_log_lines(lines: list[str]) -> list[str]:
    """Protocol lines fit for the replay player: no HTML-bearing message types, no ``<`` anywhere, one line each."""
    out = []
    for line in lines:
        if not isinstance(line, str) or "<" in line or "\n" in line or "\r" in line:
            continue
        kind = line.split("|")[1] if line.startswith("|") and "|" in line[1:] else ""
        if kind in _HTML_LINE_TYPES:
            continue
        out.append(line)
    return out


def _tier(recording: Recording) -> str:
    for line in recording.log:
        if line.startswith("|tier|"):
            return line[len("|tier|"):]
    return recording.format


def replay_file(recording: Recording) -> str:
    """The replay ``.html`` text for ``recording``."""
    names: dict[str, str] = {side: recording.players[side].name for side in SIDES}  # the log's side ids
    tier = _tier(recording)
    replay_id = _ID_SAFE.sub("", recording.id.lower().replace("_", "-").replace(".", "-")) or "replay"
    log = "\n".join(safe_log_lines(recording.log)).replace("/", "\\/")

    narrator = Narrator(names=names)
    text_lines = []
    for sentence in narrator.feed(recording.log):
        if sentence.kind == "turn":
            text_lines.append(f"<h2>{esc(sentence.text)}</h2>")
        else:
            text_lines.append(f'<div class="line">{esc(sentence.text)}</div>')

    return "".join([
        "<!DOCTYPE html>\n",
        '<meta charset="utf-8" />\n',
        "<!-- version 1 -->\n",
        f"<title>{esc(tier)} replay: {esc(names['p1'])} vs. {esc(names['p2'])}</title>\n",
        f"<style>\n{_STYLE}\n</style>\n",
        '<div class="wrapper replay-wrapper" style="max-width:1180px;margin:0 auto">\n',
        f'<input type="hidden" name="replayid" value="{esc(replay_id)}" />\n',
        '<div class="battle"></div><div class="battle-log"></div>'
        '<div class="replay-controls"></div><div class="replay-controls-2"></div>\n',
        f'<h1 style="font-weight:normal;text-align:center"><strong>{esc(tier)}</strong><br />'
        f'<span class="subtle">{esc(names["p1"])}</span> vs. <span class="subtle">{esc(names["p2"])}</span></h1>\n',
        f'<script type="text/plain" class="battle-log-data">{log}</script>\n',
        "</div>\n",
        f'<div class="battle-log battle-log-inline"><div class="inner">{"".join(text_lines)}</div></div>\n',
        "</div>\n",
        "<script>\n",
        "let daily = Math.floor(Date.now()/1000/60/60/24);"
        f"document.write('<script src=\"{REPLAY_EMBED_URL}?version'+daily+'\"></'+'script>');\n",
        "</script>\n",
    ])
