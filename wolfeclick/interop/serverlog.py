"""Showdown server battle logs (``{winner, seed, p1, p2, p1team, p2team, inputLog, log, p1rating, endType, …}``,
what a server writes per battle): re-simulated from their input log, so the recording is a battle played here.

The input log holds every choice both players made, so feeding it back through the runner (each side's choices
played in order by a ``ScriptedSide``) gives both players' exact view at every decision point: state text, legal
actions, shaped reward, snapshots. Only battle input reaches the simulator: the ``>start``/``>player`` options are
parsed and rebuilt from the keys a battle needs (``avatar``, ``rating`` and the like are dropped, ratings kept as
metadata), ``>version`` and inputlog-only ``>chat`` lines are dropped, and every line then goes through the door
(``wolfeclick.sim.protocol.check_input_lines``) like any other. The file's own log is then checked against a fresh
re-simulation of the new recording; when the input log cannot be used (refused, another simulator version's
battle, a log that differs) the file is imported from its public log (``showdown.from_public_log``) with the
reason in its notes, so no battle a server wrote is lost.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, cast

import orjson

from wolfeclick.battle.resim import compare_logs, spectator_log
from wolfeclick.battle.runner import BattleNotStarted, stream_battle
from wolfeclick.battle.schema import Recording, SourceInfo
from wolfeclick.game.actions import LegalAction, to_id
from wolfeclick.interop.public import (
    SIDES,
    ImportFormatError,
    check_singles,
    checked_format,
    clean_log,
    format_id,
    generation_format,
    imported_id,
    loss_message,
    now,
)
from wolfeclick.interop.showdown import from_public_log, tier_text
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sides import Side, is_side, other
from wolfeclick.sim.process import SimPool, SimProcess, SimulatorError
from wolfeclick.sim.protocol import MAX_INPUT_LINE, UnsafeInput, check_input_lines, parse_chunk

SERVER_FORMAT = "showdown server log"
OPTION_KEYS = {"start": ("formatid", "seed", "rated"), "player": ("name", "seed", "team")}
"""The options a battle needs, in the order they are written back; every other key is dropped."""
DROPPED_COMMANDS = (">version ", ">version-origin ", ">chat ")
"""Input-log lines that change nothing in the battle: the server's build (``>version``) and notes written to the
input log only (``>chat``, which a replay would turn into a chat line the battle never had)."""
RESIM_TURN_LIMIT = 1000
"""Showdown itself ends every battle by turn 1000; the runner's own 300-turn limit is for battles played here."""
RESIMULATED_NOTE = "re-simulated from its input log"
"""How the notes of a server log re-simulated from its input log begin."""
FALLBACK_NOTE = "input log not used"
"""How the notes of a server log imported from its public log begin (then the reason)."""
SERVER_KEYS = frozenset({"inputLog", "p1team", "p2team", "endType", "p1rating", "p2rating", "seed", "roomid"})


def looks_like_server_log(raw: Any) -> bool:
    """A server's battle log: an input log, or the keys only a server's log has (``p1team``, ``endType``…)."""
    return isinstance(raw, dict) and "schema" not in raw and (
        input_log_of(raw) is not None or len(SERVER_KEYS & set(raw)) >= 2 and "log" in raw)


def input_log_of(raw: dict[str, Any]) -> Any:
    """The input log a server's file holds: ``inputLog`` (its battle log), or ``inputlog`` (one text, as a server
    hands a replay to the replay site)."""
    return raw.get("inputLog", raw.get("inputlog"))


class InputLogUnusable(ImportFormatError):
    """An input log that does not start a battle (an anonymiser dropped its ``>start``/``>player`` lines, which hold
    the seed, the names and the teams): nothing to re-simulate, so the file is imported from its public log."""


@dataclass(frozen=True)
class ServerInput:
    """A server's input log made fit for the door: the opening lines, each side's choices, how it ended."""

    opening: list[str]
    names: dict[Side, str]
    formatid: str
    choices: dict[str, list[str]]
    ending: str | None
    """``>forcelose p1`` (a forfeit, a lost timer), ``>forcewin p2``, ``>forcetie`` or None (the battle's end)."""
    dropped_keys: tuple[str, ...]
    dropped_lines: int
    played: tuple[str, ...] = ()
    """Every choice line and the ending, in the input log's order: what the battle was fed after its opening."""


def _options(line: str, command: str, what: str) -> tuple[dict[str, Any], list[str]]:
    """The JSON options of a ``>start``/``>player`` line, only the keys a battle needs, and the keys dropped."""
    if len(line) > MAX_INPUT_LINE:  # the door's own limit, checked before parsing: no deep nesting gets parsed
        raise ImportFormatError(f"{what}: its input log's '>{command}' line is longer than {MAX_INPUT_LINE} "
                                "characters")
    try:
        options = orjson.loads(line.split(" ", 2 if command == "player" else 1)[-1])
    except orjson.JSONDecodeError:
        raise ImportFormatError(f"{what}: its input log's '>{command}' options are not JSON") from None
    if not isinstance(options, dict):
        raise ImportFormatError(f"{what}: its input log's '>{command}' options are not an object")
    kept = {key: options[key] for key in OPTION_KEYS[command] if options.get(key) is not None}  # null: not given
    rated = kept.get("rated")
    if isinstance(rated, (int, float)) and not isinstance(rated, bool):
        kept["rated"] = bool(rated)  # an old server's 1/0: the simulator reads it as truthy, and writes the same log
    return kept, sorted(str(key)[:20] for key in options if key not in OPTION_KEYS[command])


def read_input_log(value: Any, what: str = SERVER_FORMAT) -> ServerInput:
    """The input log of a server log (a list of lines or one text), rebuilt and checked by the door's rules.

    A line the door refuses (``>eval``, ``>tiebreak``, a choice with a control character…) refuses the whole file
    in one line; nothing reaches a simulator."""
    if isinstance(value, str):
        value = value.split("\n")
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise ImportFormatError(f"{what}: its 'inputLog' is not a list of lines")
    opening: list[str] = []
    names: dict[Side, str] = {}
    choices: dict[str, list[str]] = {side: [] for side in SIDES}
    dropped_keys: set[str] = set()
    early: set[str] = set()
    dropped = 0
    ending = formatid = None
    played: list[str] = []
    for raw in value:
        line = raw.rstrip("\r")
        if not line:
            continue
        if line.startswith(DROPPED_COMMANDS):
            dropped += 1
            continue
        if ending is not None:
            raise ImportFormatError(f"{what}: its input log goes on after the battle was ended ({ending})")
        if line[:4] in (">p1 ", ">p2 "):
            choices[line[1:3]].append(line[4:])
            played.append(line)
            continue
        if line.startswith((">forcelose ", ">forcewin ")) or line == ">forcetie":
            ending = line
            played.append(line)
            continue
        if line.startswith(">start "):
            if opening:
                raise ImportFormatError(f"{what}: its input log starts the battle twice")
            options, extra = _options(line, "start", what)
            formatid = options.get("formatid")
            line = ">start " + json.dumps(options, ensure_ascii=False, separators=(",", ":"))
            dropped_keys.update(extra)
        elif line.startswith(">player "):
            side = line[8:10]
            if not opening and side in SIDES and side not in early:
                early.add(side)  # a player with no battle started: the input log is unusable, not hostile
                continue
            if not opening or not is_side(side) or side in names or choices["p1"] or choices["p2"]:
                raise ImportFormatError(f"{what}: its input log has a '>player' line out of place "
                                        "(a third player, a rename mid-battle or a player before '>start')")
            options, extra = _options(line, "player", what)
            names[side] = str(options.get("name") or f"Player {side[1]}")
            options["name"] = names[side]
            line = f">player {side} " + json.dumps(options, ensure_ascii=False, separators=(",", ":"))
            dropped_keys.update(extra)
        opening.append(line)  # anything else stays, for the door to refuse
    try:
        check_input_lines([*opening, *(f">{side} {choice}" for side in SIDES for choice in choices[side]),
                           *([ending] if ending else [])])
    except UnsafeInput as exc:
        raise ImportFormatError(f"{what}: its input log is refused: {exc}"[:400]) from None
    if not opening or not opening[0].startswith(">start ") or set(names) != set(SIDES) or early:
        raise InputLogUnusable(f"{what}: its input log does not start a battle ('>start' then both '>player' "
                               "lines)")
    if not isinstance(formatid, str) or not formatid:
        raise InputLogUnusable(f"{what}: its input log's '>start' names no format")
    return ServerInput(opening, names, formatid, choices, ending, tuple(sorted(dropped_keys)), dropped,
                       tuple(played))


class ServerForfeit(Exception):
    """Raised by the side a server forfeited (``>forcelose``): the runner then forfeits that side, as the server
    did."""


def _recorded_action(observation: Observation, choice: str) -> LegalAction | None:
    """The legal action a server's normalised choice (``move icebeam terastallize``, ``switch 3``, ``team 2, 1``)
    names."""
    words = choice.replace(",", " ").split()
    if len(words) < 2:
        return None
    for action in observation.legal_actions:
        if action.kind != words[0]:
            continue
        if action.kind == "move" and (words[1] == str(action.slot) or to_id(words[1]) in action.ids()):
            return action
        if action.kind != "move" and words[1] == str(action.slot):
            return action
    return None


def _as_sent_here(action: LegalAction | None, choice: str) -> str:
    """A server's normalised choice as a battle played here sends it (``move icebeam terastallize`` → ``move 3
    terastallize``, ``team 5, 6, 2, 1, 4, 3`` → ``team 562143``): the same battle, the same recorded command."""
    words = choice.replace(",", " ").split()
    if action is not None and action.kind == "move":
        return " ".join([action.command(), *words[2:]])
    if action is not None and action.kind == "team" and all(word.isascii() and word.isdigit() for word in words[1:]):
        return "team " + "".join(words[1:])
    return choice


class ScriptedSide:
    """Plays one side's recorded choices in order; the battle is the server's as long as they are accepted."""

    blocking = False
    spec = ""

    def __init__(self, side: Side, choices: list[str], ending: str | None) -> None:
        self.side = side
        self.choices = choices
        self.position = 0
        foe = other(side)
        self.loses = ending in (f">forcelose {side}", f">forcewin {foe}")
        self.foe_loses = ending in (f">forcelose {foe}", f">forcewin {side}")
        self.tie = ending == ">forcetie"
        self.problem: str | None = None
        self.last: tuple[str, str] | None = None
        """The last recorded choice played and the command sent for it (``_Replayed`` checks its writes by it)."""

    def metadata(self) -> dict[str, Any]:
        return {}

    def decide(self, observation: Observation) -> Decision:
        if observation.rejected:
            self.problem = f"the simulator refused {self.side}'s recorded choice {observation.rejected[-1]!r}"
            raise ServerForfeit(self.problem)
        if self.position < len(self.choices):
            choice = self.choices[self.position]
            self.position += 1
            action = _recorded_action(observation, choice)
            command = _as_sent_here(action, choice)
            self.last = (choice, command)
            return Decision(action=action, command=command)
        if self.loses:
            raise ServerForfeit(f"{self.side} forfeited on the server")
        if self.foe_loses:  # a choice never committed: the other side forfeits at this same point, so it is not sent
            return Decision(action=None, command="default")
        self.problem = ("its input log ends in a forced tie (>forcetie), which is not replayed" if self.tie else
                        f"its input log ends before the battle does ({self.side} has no choice left)")
        raise ServerForfeit(self.problem)


def omniscient_log(chunks: list[str]) -> list[str]:
    """What a server's own battle log holds: every line, each side's exact HP (``|split|`` pairs give their secret
    line, as the server's ``getLog(-1)`` does)."""
    lines: list[str] = []
    for raw in chunks:
        chunk = parse_chunk(raw)
        if chunk.kind != "update":
            continue
        index, body = 0, chunk.lines
        while index < len(body):
            if body[index].startswith("|split|") and index + 2 < len(body):
                lines.append(body[index + 1])
                index += 3
                continue
            if body[index]:
                lines.append(body[index])
            index += 1
    return lines


def comparable(log: list[str]) -> list[str]:
    """A log reduced to what both a server's room and the simulator say: battle lines only (no chat, timers,
    joins, ratings), ``|player|`` lines as side and name (a room adds avatars and ratings), no room messages."""
    kept, secret = [], 0
    for line in log:  # a log that kept |split| blocks: the exact line (as a server's own log keeps it), once
        if line.startswith("|split|"):
            secret = 2
            continue
        if secret == 1:
            secret = 0
            continue
        secret = max(0, secret - 1)
        kept.append(line)
    lines, _ = clean_log(kept)
    out = []
    players: set[str] = set()
    for line in lines:
        if line.startswith("|player|"):
            parts = line.split("|")
            seat = "|".join(parts[:4])
            if len(parts) > 3 and parts[3] and seat not in players:
                players.add(seat)
                out.append(seat)
            continue
        if line.startswith("|-message|"):
            continue  # "… forfeited.", "… lost due to inactivity.": the room's, not the simulator's
        out.append(line)
    return out


def header_as_in(want: list[str], got: list[str]) -> list[str]:
    """``got`` with its lines before ``|start`` in ``want``'s order when both headers hold the same lines: rooms and
    tools write the header (gametype, players, gen, tier, rules) in their own order; it says the same battle."""
    cut_want = want.index("|start") if "|start" in want else 0
    cut_got = got.index("|start") if "|start" in got else 0
    if Counter(want[:cut_want]) == Counter(got[:cut_got]):
        return want[:cut_want] + got[cut_got:]
    return got


def _file_log(raw: dict[str, Any]) -> list[str]:
    log = raw.get("log")
    if isinstance(log, str):
        return log.split("\n")
    if isinstance(log, list) and all(isinstance(line, str) for line in log):
        return log
    return []


def _metadata(raw: dict[str, Any], side: str, note: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"import": {"format": SERVER_FORMAT, "notes": note}}
    rating = raw.get(f"{side}rating")
    if isinstance(rating, (int, float)) and not isinstance(rating, bool):
        metadata["rating"] = rating
    elif isinstance(rating, dict):
        kept = {str(k)[:40]: v for k, v in list(rating.items())[:20]
                if isinstance(v, (int, float, str)) and not isinstance(v, bool) and len(str(v)) <= 100}
        if kept:
            metadata["rating"] = kept
    name = raw.get(side)
    if isinstance(name, str) and name:
        metadata["server_name"] = name[:100]
    return metadata


class SimHost:
    """One simulator on an event loop of its own thread, shared by many imports (a folder of server logs would
    otherwise start a Node process per file). ``run`` may be called from any thread, even one with a running
    event loop; ``close`` ends the simulator and the thread."""

    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        """Simulators in the host's pool: imports running in that many threads at once each get one."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: SimPool | None = None
        self._lock = threading.Lock()

    def run(self, work: Callable[[SimProcess], Coroutine[Any, Any, Any]]) -> Any:
        """``work(process)`` run to its end on the host's loop; its result (or exception) handed back."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="wolfeclick-import", daemon=True)
                self._thread.start()
                asyncio.run_coroutine_threadsafe(self._start(), self._loop).result()
        return asyncio.run_coroutine_threadsafe(self._work(work), self._loop).result()

    async def _start(self) -> None:
        pool = SimPool(self.processes)
        await pool.start()
        self._pool = pool

    async def _work(self, work: Callable[[SimProcess], Coroutine[Any, Any, Any]]) -> Any:
        assert self._pool is not None
        return await work(await self._pool.live())

    def close(self) -> None:
        if self._loop is None:
            return
        if self._pool is not None:
            asyncio.run_coroutine_threadsafe(self._pool.close(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join()
        self._loop.close()
        self._loop = self._thread = self._pool = None

    def __enter__(self) -> "SimHost":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Heard:
    """A simulator as the runner sees it, keeping every chunk it answers: the battle's omniscient output, which
    the file's own log is checked against."""

    def __init__(self, process: SimProcess) -> None:
        self.process = process
        self.out: list[str] = []

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        reply = await self.process.call(op, **fields)
        self.out.extend(reply.get("out") or ())
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.process, name)


class _Diverged(Exception):
    """The runner asked the simulator for something the replayed input log does not hold (a refused choice, a
    forfeit the input log does not say, a battle cut short): the file is re-simulated call by call instead."""


class _Replayed:
    """A simulator as the runner sees it, answering from one ``replay`` request instead of a request per decision.

    The server's input log is fed to the simulator in one go (its opening, then each later line alone, each line's
    output kept apart), and each of the runner's writes is answered with the outputs of the lines it sends, as long
    as it sends the input log's lines in their order: the same lines, or a recorded choice in the form the runner
    sends it (``move 3`` for the server's ``move icebeam``: the simulator reads both as the same move, and keeps
    neither text). Anything else raises ``_Diverged`` before a reply is made up. A request per decision cost the
    simulator more than the battle itself (each woke it, parsed a request and wrote a reply). Every chunk handed
    out is kept (``out``), as ``_Heard`` keeps them."""

    def __init__(self, process: SimProcess, script: ServerInput, sides: dict[Side, ScriptedSide]) -> None:
        self.process = process
        self.script = script
        self.sides = sides
        self.out: list[str] = []
        self.outs: list[list[str]] | None = None
        self.at = 0
        self.ended = False
        self.inputlog: list[str] = []

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        if op == "start" and self.outs is None:
            lines = list(fields["lines"])
            try:
                reply = await self.process.call("replay", format=fields["format"], lines=[*lines, *self.script.played],
                                                opening=len(lines))
            except SimulatorError:  # refused or failed: the runner's own requests say how, in their words
                raise _Diverged("replay refused") from None
            self.outs, self.ended, self.inputlog = reply["outs"], bool(reply["ended"]), reply["inputlog"]
            return self._answer(reply["out"])
        if op == "write" and self.outs is not None:
            lines = fields["lines"]
            end = self.at + len(lines)
            if end > len(self.outs) or not all(self._same(line, played) for line, played
                                               in zip(lines, self.script.played[self.at:end])):
                raise _Diverged(f"the runner wrote {lines!r}")
            out = [chunk for outs in self.outs[self.at:end] for chunk in outs]
            self.at = end
            return self._answer(out)
        raise _Diverged(f"the runner asked for {op}")

    def _same(self, line: str, played: str) -> bool:
        """``line`` sends what the input log's ``played`` line says: the same text, or the command the scripted
        side sent for that recorded choice."""
        if line == played:
            return True
        side = played[1:3]
        return played[:4] in (">p1 ", ">p2 ") and line[:4] == played[:4] \
            and self.sides[cast(Side, side)].last == (played[4:], line[4:])

    def _answer(self, out: list[str]) -> dict[str, Any]:
        self.out.extend(out)
        reply: dict[str, Any] = {"out": out, "ended": False}
        if self.ended and self.outs is not None and self.at == len(self.outs):
            reply.update(ended=True, inputlog=self.inputlog)
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.process, name)


@dataclass(frozen=True)
class Resimulated:
    """A recording re-simulated from a server log, or why it could not be (then ``recording`` is None)."""

    recording: Recording | None
    problem: str | None


async def resimulate_server_log(raw: dict[str, Any], data: bytes, *, process: SimProcess | None = None,
                                pool: SimPool | None = None, script: ServerInput | None = None) -> Resimulated:
    """Replay the server log's input log (``script``: read already) through the runner; the recording, or the
    one-line reason it is unusable.

    A refused input log (the door's rules) raises ImportFormatError: such a file is refused, not imported."""
    script = script or read_input_log(input_log_of(raw))
    fmt = format_id(script.formatid)
    log = _file_log(raw)
    check_singles(log, fmt or script.formatid, SERVER_FORMAT)
    fmt = checked_format(fmt, SERVER_FORMAT)
    hint = raw.get("id") if isinstance(raw.get("id"), str) else raw.get("roomid")
    recording_id = imported_id("showdownserver", data, hint if isinstance(hint, str) else None)
    own = None
    if process is None:
        if pool is None:
            own = pool = SimPool(1)
            await pool.start()
        process = await pool.live()
    try:
        try:
            try:
                recording, sides, chunks = await _played(script, fmt, recording_id, process, replayed=True)
            except _Diverged:
                recording, sides, chunks = await _played(script, fmt, recording_id, process, replayed=False)
        except BattleNotStarted as exc:
            return Resimulated(None, f"the simulator would not start it: {exc}")
        problem = next((side.problem for side in sides.values() if side.problem), None)
        if problem is None and recording.result.reason == "aborted":
            problem = f"the re-simulation stopped: {recording.result.error}"
        left = [side for side in SIDES if sides[side].position < len(script.choices[side])]
        if problem is None and left:
            problem = f"the battle ended before {left[0]}'s last {len(script.choices[left[0]]) - sides[left[0]].position}" \
                      " recorded choices"
        if problem is None and log:
            # the simulator's own output of this battle: the same input log gives the same output (the simulator
            # is deterministic), so a second simulation of it would only repeat this one
            want = comparable(log)
            check = compare_logs(want, header_as_in(want, comparable(omniscient_log(chunks))))
            if not check.ok and compare_logs(want, header_as_in(want, comparable(spectator_log(chunks)))).ok:
                check = compare_logs(want, want)  # the file kept the spectator's view
            if not check.ok:
                problem = f"its input log does not reproduce its log ({check.message[:200]})"
    finally:
        if own is not None:
            await own.close()
    if problem is not None:
        return Resimulated(None, problem)
    return Resimulated(_as_import(recording, raw, script, checked=bool(log)), None)


async def _played(script: ServerInput, fmt: str, recording_id: str, process: SimProcess,
                  replayed: bool) -> tuple[Recording, dict[Side, ScriptedSide], list[str]]:
    """The runner's recording of the input log's battle, the scripted sides and every chunk the simulator said:
    answered from one ``replay`` request (``_Replayed``, which raises ``_Diverged`` where the runner leaves the
    input log), or with a request per decision."""
    sides = {side: ScriptedSide(side, script.choices[side], script.ending) for side in SIDES}
    heard: _Replayed | _Heard = _Replayed(process, script, sides) if replayed else _Heard(process)
    recording = None
    async for item in stream_battle(sides["p1"], sides["p2"], format_id=fmt, seed=0, max_turns=RESIM_TURN_LIMIT,
                                    battle_id=recording_id, process=cast(SimProcess, heard), names=script.names,
                                    opening=script.opening):
        if isinstance(item, Recording):
            recording = item
    assert recording is not None
    return recording, sides, heard.out


def _as_import(recording: Recording, raw: dict[str, Any], script: ServerInput, checked: bool) -> Recording:
    notes = [f"{RESIMULATED_NOTE}: both players' views"]
    if not checked:
        notes.append("the file holds no log to check the re-simulation against")
    if script.dropped_keys:
        notes.append(f"input-log options dropped: {', '.join(script.dropped_keys)}")
    if script.dropped_lines:
        notes.append(f"{script.dropped_lines} >version/>chat input lines dropped")
    note = "; ".join(notes)
    players = {side: info.model_copy(update={"metadata": _metadata(raw, side, note)})
               for side, info in recording.players.items()}
    result = recording.result
    if result.reason == "forfeit":
        loser = next(side for side in SIDES if side != result.winner)
        said = loss_message(clean_log(_file_log(raw))[0], {side: info.name for side, info in players.items()})
        how = said[1] if said and said[0] == loser else "forfeited"  # the room's own words: a lost timer too
        result = result.model_copy(update={"error": f"{loser} {how} on the server"})
    # the time the scripted replay took to choose is not the players' (a server measured none): null, as every
    # import has it, so the same file imports to the same bytes
    turns = [turn.model_copy(update={"decisions": {side: decision.model_copy(update={"latency_ms": None})
                                                   for side, decision in turn.decisions.items()}})
             for turn in recording.turns]
    return recording.model_copy(update={
        "seed": None, "created": now(), "players": players, "result": result, "turns": turns,
        "source": SourceInfo(kind="imported", detail=SERVER_FORMAT),
    })


def read_server_log(raw: dict[str, Any], data: bytes, host: SimHost | None = None) -> Recording:
    """A server battle log → recording: re-simulated when its input log reproduces its log, else from the log.
    ``host`` is the simulator to use (one is started and ended for this file when None)."""
    check_singles(clean_log(_file_log(raw))[0], None, SERVER_FORMAT, format_hints(raw))  # what it is, first
    problem = "it has no input log"
    value = input_log_of(raw)
    script = None
    if value:
        try:
            script = read_input_log(value)
        except InputLogUnusable as exc:
            problem = str(exc).removeprefix(f"{SERVER_FORMAT}: ")
    if script is not None:
        def work(process: SimProcess) -> Coroutine[Any, Any, Resimulated]:
            return resimulate_server_log(raw, data, process=process, script=script)

        if host is None:
            with SimHost() as own:
                outcome = own.run(work)
        else:
            outcome = host.run(work)
        if outcome.recording is not None:
            return outcome.recording
        problem = outcome.problem or "unknown"
    return public_fallback(raw, data, problem)


def format_hints(raw: dict[str, Any]) -> tuple[Any, ...]:
    """What names a server log's format besides its log: its fields and its input log's ``>start`` line."""
    value = input_log_of(raw)
    lines = value.split("\n") if isinstance(value, str) else value if isinstance(value, list) else []
    start = next((line[:MAX_INPUT_LINE] for line in lines if isinstance(line, str) and line.startswith(">start ")),
                 None)
    return raw.get("format"), raw.get("formatid"), raw.get("id"), raw.get("roomid"), start


def public_fallback(raw: dict[str, Any], data: bytes, problem: str) -> Recording:
    """The server log imported from its public log alone, saying why its input log was not used."""
    lines, dropped = clean_log(_file_log(raw))
    if not lines:
        raise ImportFormatError(f"{SERVER_FORMAT}: {problem}, and its 'log' holds no battle protocol lines")
    fmt = format_id(raw.get("format")) or format_id(raw.get("formatid")) or format_id(tier_text(lines)) \
        or generation_format(lines)
    check_singles(lines, fmt, SERVER_FORMAT, format_hints(raw))
    fmt = checked_format(fmt, SERVER_FORMAT)
    names = {side: raw[side] for side in SIDES if isinstance(raw.get(side), str) and raw[side]}
    hint = raw.get("id") if isinstance(raw.get("id"), str) else raw.get("roomid")
    recording = from_public_log(lines, fmt=fmt, recording_id=imported_id("showdownserver", data,
                                                                          hint if isinstance(hint, str) else None),
                                detail=SERVER_FORMAT, names=names, dropped=dropped)
    players = {}
    for side, info in recording.players.items():
        metadata = _metadata(raw, side, f"{FALLBACK_NOTE}: {problem[:240]}; "
                                        + info.metadata["import"]["notes"])
        players[side] = info.model_copy(update={"metadata": metadata})
    return recording.model_copy(update={"players": players})
