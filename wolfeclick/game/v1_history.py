"""The reference prompt's memory of a battle: what OpenEnv-WolfeClick's poke-env 0.8 knew at each decision, and the
small formatters its state text is built from.

Where poke-env 0.8 (the reference's) and 0.16 (ours) track state differently (moves after Transform, Mimic and
Sketch; abilities after Transform, Trace, Worry Seed and immunities; our own ability; a status Healing Wish cured),
``V1History`` replays the battle's parsed events with 0.8's rules (``docs/llm.md``, Fidelity). The ``wolfeclick-v1``
profile (``wolfeclick.game.prompts``) renders its Part A/B/C text from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wolfeclick.game import v1_moves as moveset
from wolfeclick.game.actions import to_id

__all__ = ["v1_percent", "v1_status", "v1_speed_range", "v1_stat_changes", "v1_moves", "v1_single_ability", "ability_reveals", "V1History"]


def v1_percent(fraction: float | None) -> float:
    if fraction is None:
        return 0.0
    return max(0.0, min(1.0, float(fraction))) * 100.0


def v1_status(mon: Any, none: str, shown: str | None = None) -> str:
    """``str(Status)``; ``shown`` is the history's (``V1History.status_of``) when there is one."""
    if shown is not None:
        return shown
    return str(mon.status) if mon.status is not None else none


def v1_speed_range(mon: Any, base: int | None = None) -> str:
    base = mon.base_stats.get("spe", 0) if base is None else base
    if base <= 0:
        return "Unknown"
    low = int((((2 * base) * 100) / 100 + 5) * 0.9)
    high = int((((2 * base + 31 + (252 // 4)) * 100) / 100 + 5) * 1.1)
    return f"{low}-{high}"


def v1_stat_changes(mon: Any) -> str:
    parts = [f"{stat.capitalize()} {'+' if stage > 0 else ''}{stage}" for stat, stage in mon.boosts.items() if stage]
    return ", ".join(parts) if parts else "None"


def v1_moves(mon: Any, moves: "moveset.MoveSet | None" = None) -> str:
    """Part B's move line: poke-env 0.8's move set (``moves``, from ``V1History``), else poke-env's own."""
    if moves is None:
        tags = [f"{m.id}({m.type.name[0] if m.type is not None else '?'}{m.base_power or 0})"
                for m in mon.moves.values()]
    else:
        tags = []
        for key, raw in moves.items():
            kind, power = moveset.shown_power(key, raw, mon.gen)
            tags.append(f"{moveset.shown_id(key, raw)}({kind.name[0] if kind is not None else '?'}{power})")
    if not tags:
        return "  Moves: [unknown]"
    return "  Moves: " + " | ".join(tags)


def v1_single_ability(species: str | None, gen: int) -> str | None:
    """The ability of a species that has exactly one (poke-env 0.8 then set it as known)."""
    if not species:
        return None
    try:
        from poke_env.data import GenData

        abilities = [to_id(a) for a in GenData.from_gen(gen).pokedex[species]["abilities"].values()]
    except (KeyError, ValueError):
        return None
    return abilities[0] if len(abilities) == 1 else None


@dataclass
class _Seen:
    """What the reference's opponent tracker remembers about one opponent species."""

    name: str
    hp: float
    status: str | None
    moves: list[str] = field(default_factory=list)
    item: str | None = None
    ability: str | None = None
    transform_speed: int | None = None


def _team_key(ident: str) -> str:
    """``p2a: Ditto`` → ``p2: Ditto``: the key of a Pokémon in poke-env's team dicts."""
    head, _, name = ident.partition(": ")
    return f"{head[:2]}: {name}"


def _base_speed(species: str | None, gen: int) -> int | None:
    if species is None:
        return None
    try:
        from poke_env.data import GenData

        return int(GenData.from_gen(gen).pokedex[species]["baseStats"]["spe"])
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class _Copy:
    """What poke-env 0.8 made of an opponent's Transforms: the copied base speed, kept for good."""

    speed: int | None = None


def _of(tag: str) -> str:
    """``[of] p1a: Ferrothorn`` → ``p1a: Ferrothorn``."""
    return tag.split("[of]")[-1].strip()


def ability_reveals(event: list[str]) -> list[tuple[str, str]]:
    """(who, ability) for each ability poke-env 0.8 set as known from this event (besides ``-ability``, Transform
    and the request): an immunity, damage or healing from an ability, an item an ability found or took, and an
    ability named by a ``move`` event; in 0.8's own reading, spellings included."""
    kind = event[1] if len(event) > 1 else ""
    if kind == "-immune" and len(event) == 4 and event[3].startswith("[from] ability:"):
        return [(event[2], event[3].replace("[from] ability:", ""))]
    if kind == "-damage" and len(event) == 6 and event[4].startswith("[from] ability:") \
            and event[5].startswith("[of]"):
        return [(_of(event[5]), event[4].split("ability:")[-1])]
    if kind == "-heal" and len(event) == 6 and event[4].startswith("[from] ability:"):
        ability = to_id(event[4].split("ability:")[-1])
        return [(_of(event[5]) if ability == "hospitality" else event[2], ability)]
    if kind == "-item" and len(event) == 6:
        if event[4] == "[from] ability: Frisk":
            return [(_of(event[5]), "frisk")]
        if event[4] in ("[from] ability: Pickpocket", "[from] ability: Magician"):
            return [(event[2], event[4].split("ability: ")[-1])]
    if kind == "move" and len(event) > 3:
        read = moveset.move_event(event)
        if read is not None and read[2] is not None:
            return [(read[0], read[2])]
    return []


class V1History:
    """The reference's opponent history (keyed by species, in first-seen order), updated at each decision, plus what
    poke-env 0.8 would have known from the protocol events since the last decision.

    The events are the battle's own record of the lines it parsed (poke-env's ``Battle._replay_data``): read in
    order, they fix what a decision-time look at poke-env 0.16's state cannot — the target of a Transform (taken at
    the ``-transform`` event, not from whoever is active later), every opponent's ability as 0.8 knew it (species,
    Transform and forme data, ``-ability``, immunities, damage, healing, items; temporary ones until the switch-out),
    our own Pokémon's ability (request entries, wait requests inferred), every Pokémon's moves as 0.8 kept them
    (``wolfeclick.game.v1_moves``: four at most, the copied ones included, Hidden Power by its typed id), and a status
    Healing Wish cured without 0.8 noticing.
    """

    def __init__(self) -> None:
        self.seen: dict[str, _Seen] = {}
        self.read = 0
        """How many of the battle's parsed events have been read."""
        self.copies: dict[str, _Copy] = {}
        """By opponent species."""
        self.opp_ability: dict[str, str] = {}
        """By team key: an opponent's ability as 0.8 knew it for good (a species' only ability, a Transform
        target's, a forme's, or one an event named: Trace, Worry Seed, an immunity …)."""
        self.opp_temp: dict[str, str] = {}
        """By team key: an ability 0.8 held until the switch-out ("" for none: Gastro Acid)."""
        self.opp_details: dict[str, str] = {}
        self.opp_active: str | None = None
        self.moves: dict[str, moveset.MoveSet] = {}
        """By team key (both sides): the Pokémon's moves as poke-env 0.8 kept them."""
        self.statuses: dict[str, str] = {}
        """By team key: the status the events last named (``par``, ``fnt``…), until one cures it."""
        self.stale: dict[str, str] = {}
        """By team key: a status 0.8 still showed after Healing Wish or Lunar Dance cured it silently."""
        self.own_ability: dict[str, str | None] = {}
        """By team key: our Pokémon's ability as 0.8 had it."""
        self.own_entry: dict[str, dict[str, Any]] = {}
        """By team key: the request entry our Pokémon's ability and moves were last read from."""
        self.own_events: list[tuple[str, str, bool]] = []
        """Abilities events gave our Pokémon since the last decision: (team key, ability, after a wait request)."""
        self._waiting = 0
        """0, or 1 after an ``upkeep``, 2 once the opponent then sends a Pokémon in (or sends one in after its
        U-turn): we were sent a wait request."""
        self.own_condition: dict[str, str] = {}
        """By team key: our Pokémon's condition (``300/404 par``) as the events since the last request left it."""
        self.reread: set[str] = set()
        """Team keys whose request entry had changed by an inferred wait request (0.8 re-read them there)."""
        self.at_wait: dict[str, str | None] = {}
        """By team key: our Pokémon's condition at the last inferred wait request."""
        self.changed_after_wait: set[str] = set()
        """Team keys whose entry changed after that wait request in a way the condition does not show (Transform)."""

    def opponent_speed(self, mon: Any) -> int | None:
        """poke-env 0.8 kept a transformed Pokémon's copied base stats after it switched out."""
        entry = self.seen.get(mon.species)
        return entry.transform_speed if entry is not None and not getattr(mon, "transformed", False) else None

    # --- events --------------------------------------------------------------------------------------------
    def _mon(self, battle: Any, ident: str) -> Any:
        key = _team_key(ident)
        return battle.team.get(key) or battle.opponent_team.get(key)

    def _events(self, battle: Any) -> None:
        events = getattr(battle, "_replay_data", None) or []
        fresh, self.read = events[self.read:], len(events)
        ours = battle.player_role or "p1"
        self._waiting = 0  # the request being answered came after everything read before
        for event in fresh:
            kind = event[1] if len(event) > 1 else ""
            if kind == "upkeep":
                self._waiting = 1
            elif kind == "turn":
                self._waiting = 0
            elif kind in ("switch", "drag") and len(event) > 2 and not event[2].startswith(ours) \
                    and (self._waiting == 1 or event[-1] == "[from] U-turn"):
                self._waiting = 2
                self.at_wait = {key: self.own_condition.get(key, entry.get("condition")) for key, entry in self.own_entry.items()}
                self.reread |= {key for key, condition in self.at_wait.items()
                                if condition != self.own_entry[key].get("condition")}
                self.changed_after_wait = set()
            if kind == "-transform" and self._waiting == 2 and len(event) > 2 and event[2].startswith(ours):
                self.changed_after_wait.add(_team_key(event[2]))
            self._own_condition(event, ours)
            if kind in ("switch", "drag") and len(event) > 3 and not event[2].startswith(ours):
                self._opponent_in(battle, event[2], event[3])
            if kind == "-transform" and len(event) > 3:
                self._transform(battle, event[2], event[3], ours)
            elif kind == "-ability" and len(event) > 3:
                if not (len(event) > 4 and event[4].startswith("[from] move:")):
                    self._ability(battle, event[2], event[3], ours)
                elif not event[2].startswith(ours):  # 0.8 held an ability a move gave as temporary
                    self.opp_temp[_team_key(event[2])] = to_id(event[3])
            elif kind == "-endability" and len(event) > 2 and not event[2].startswith(ours):
                self.opp_temp[_team_key(event[2])] = ""
            elif kind == "-activate" and len(event) > 6 and event[3] == "move: Skill Swap":
                self._skill_swap(event, ours)
            elif kind == "move" and len(event) > 3:
                read = moveset.move_event(event)
                if read is not None:
                    self._moved(battle, read[0], read[1])
            elif kind == "-prepare" and len(event) > 3:
                self._moved(battle, event[2], [event[3]])
            elif kind in ("-formechange", "detailschange") and len(event) > 3:
                self._forme(battle, event[2], event[3], ours)
            self._status(event)
            for who, ability in ability_reveals(event):
                self._ability(battle, who, ability, ours)

    def _own_condition(self, event: list[str], ours: str) -> None:
        kind = event[1] if len(event) > 1 else ""
        where = {"switch": 4, "drag": 4, "-damage": 3, "-heal": 3, "-sethp": 3}.get(kind)
        if len(event) < 3 or not event[2].startswith(ours):
            return
        key = _team_key(event[2])
        hp = self.own_condition.get(key, "").split(" ")[0]
        if where is not None and len(event) > where:
            self.own_condition[key] = event[where]
        elif kind == "faint":
            self.own_condition[key] = "0 fnt"
        elif kind == "-status" and len(event) > 3 and hp:
            self.own_condition[key] = f"{hp} {event[3]}"
        elif kind == "-curestatus" and hp:
            self.own_condition[key] = hp

    def _status(self, event: list[str]) -> None:
        """0.8 set a status from every event that names one and cleared it only on a cure; a Healing Wish or Lunar
        Dance heal (``100/100``, no status) left it in place."""
        kind = event[1] if len(event) > 1 else ""
        where = {"switch": 4, "drag": 4, "-damage": 3, "-heal": 3, "-sethp": 3}.get(kind)
        if kind in ("-status", "faint") and len(event) > 2:
            key = _team_key(event[2])
            self.statuses[key] = event[3] if kind == "-status" and len(event) > 3 else "fnt"
            self.stale.pop(key, None)
        elif kind == "-curestatus" and len(event) > 2:
            self.statuses.pop(_team_key(event[2]), None)
            self.stale.pop(_team_key(event[2]), None)
        elif kind == "-cureteam" and len(event) > 2:
            for key in [k for k in self.statuses if k[:2] == event[2][:2]]:
                self.statuses.pop(key, None)
                self.stale.pop(key, None)
        elif where is not None and len(event) > where:
            key, condition = _team_key(event[2]), event[where]
            if " " in condition:
                self.statuses[key] = condition.split(" ")[1]
                self.stale.pop(key, None)
            elif kind == "-heal" and len(event) > 4 and event[4] in ("[from] move: Healing Wish",
                                                                     "[from] move: Lunar Dance"):
                if self.statuses.get(key, "fnt") != "fnt":
                    self.stale[key] = self.statuses[key]

    def status_of(self, battle: Any, mon: Any) -> str | None:
        """``str(Status)`` as 0.8 had it: poke-env's, or the status a Healing Wish cured without 0.8 noticing."""
        key = next((k for k, m in {**battle.team, **battle.opponent_team}.items() if m is mon), None)
        if key in self.stale and mon.status is None:
            return f"{self.stale[key].upper()} (status) object"
        return str(mon.status) if mon.status is not None else None

    def _forme(self, battle: Any, who: str, details: str, ours: str) -> None:
        """0.8 read a new forme's data, its single ability included (a Ditto copying Giratina-Origin becomes
        Giratina, Pressure)."""
        mon = self._mon(battle, who)
        if mon is None:
            return
        species = to_id(details.split(",")[0])
        single = v1_single_ability(species, mon.gen)
        if who.startswith(ours):
            if single:
                self.own_events.append((_team_key(who), single, self._waiting == 2))
        else:
            if single:
                self.opp_ability[_team_key(who)] = single
            if mon.species in self.copies:
                copy = self.copies[mon.species]
                copy.speed = _base_speed(species, mon.gen) or copy.speed

    def _opponent_in(self, battle: Any, who: str, details: str) -> None:
        """0.8 at a switch-in: the one that left loses a temporary ability; new details give the species' only
        ability, if it has one."""
        key = _team_key(who)
        if self.opp_active is not None:
            self.opp_temp.pop(self.opp_active, None)
        self.opp_active = key
        if self.opp_details.get(key) != details:
            self.opp_details[key] = details
            single = v1_single_ability(to_id(details.split(",")[0]), battle.gen)
            if single:
                self.opp_ability[key] = single

    def _skill_swap(self, event: list[str], ours: str) -> None:
        """Skill Swap as 0.8 read it when the event names both abilities (from gen 5 on; gen 4 names none)."""
        target, actor = event[2], _of(event[6])
        if not target.startswith(ours):
            key = _team_key(target)
            if self.opponent_ability(key) is None:
                self.opp_ability[key] = to_id(event[5])
            self.opp_temp[key] = to_id(event[4])
        if not actor.startswith(ours):
            self.opp_temp[_team_key(actor)] = to_id(event[5])

    def opponent_ability(self, key: str) -> str | None:
        """An opponent's ability as 0.8 showed it: a temporary one while it lasts, else the one known for good."""
        if key in self.opp_temp:
            return self.opp_temp[key] or None
        return self.opp_ability.get(key)

    def _moved(self, battle: Any, ident: str, names: list[str]) -> None:
        moves = self.moves.setdefault(_team_key(ident), {})
        for name in names:
            moveset.moved(moves, name, battle.gen)

    def _transform(self, battle: Any, source: str, target: str, ours: str) -> None:
        mon, into = self._mon(battle, source), self._mon(battle, target)
        if mon is None or into is None or not into.species:
            return
        single = v1_single_ability(into.species, mon.gen)
        if source.startswith(ours):  # 0.8 set our Pokémon's ability too, until the next changed request entry
            if single:
                self.own_events.append((_team_key(source), single, self._waiting == 2))
            return
        if single:
            self.opp_ability[_team_key(source)] = single
        copy = self.copies.setdefault(mon.species, _Copy())
        copy.speed = _base_speed(into.species, mon.gen) or copy.speed

    def _ability(self, battle: Any, who: str, named: str, ours: str) -> None:
        mon = self._mon(battle, who)
        if mon is None:
            return
        ability = to_id(named)
        if who.startswith(ours):
            self.own_events.append((_team_key(who), ability, self._waiting == 2))
        else:
            self.opp_ability[_team_key(who)] = ability

    # --- our side ------------------------------------------------------------------------------------------
    def _own(self, battle: Any, request: dict[str, Any] | None) -> None:
        """poke-env 0.8 re-read a Pokémon's ability and moves from each request in which its entry had changed;
        between requests, events set them. The requests we see are the ones we answer, plus (inferred) the wait
        request sent while the opponent replaces a fainted Pokémon at the end of a turn: an entry that changed was
        re-read then, and only the events after it still count."""
        events, self.own_events = self.own_events, []
        reread, self.reread = self.reread, set()
        at_wait, self.at_wait = self.at_wait, {}
        changed_after_wait, self.changed_after_wait = self.changed_after_wait, set()
        for entry in ((request or {}).get("side") or {}).get("pokemon") or []:
            key = _team_key(str(entry.get("ident", "")))
            changed = self.own_entry.get(key) != entry or key in reread
            # the wait request's entry is this one unless it changed again since (U-turn: the turn went on)
            wait_kept = key not in changed_after_wait and at_wait.get(key, entry.get("condition")) == entry.get("condition")
            self.own_condition[key] = str(entry.get("condition", ""))
            if changed:
                self.own_entry[key] = entry
                self.own_ability[key] = to_id(entry.get("ability") or entry.get("baseAbility") or "") or None
                moveset.from_request(self.moves.setdefault(key, {}), list(entry.get("moves") or []), battle.gen)
            for event_key, ability, after_wait in events:
                if event_key == key and ((after_wait and wait_kept) or not changed):
                    self.own_ability[key] = ability

    def own_ability_of(self, battle: Any, mon: Any) -> str | None:
        """Our Pokémon's ability as poke-env 0.8 showed it: the request's (so a transformed Pokémon shows its own,
        ``limber``, and a tracer ``trace``), or what an event said since its entry in the request last changed."""
        key = next((k for k, m in battle.team.items() if m is mon), None)
        return self.own_ability.get(key) or mon.ability if key is not None else mon.ability

    def option_id(self, battle: Any, request_id: str) -> str | None:
        """The id 0.8 listed for a request's move of our active Pokémon (``available_moves_from_request``): the
        stored move's (``hiddenpowerflying`` for the request's ``hiddenpower``), else the request's id."""
        mon = battle.active_pokemon
        key = next((k for k, m in battle.team.items() if m is mon), None) if mon is not None else None
        moves = self.moves.get(key) if key is not None else None
        if moves is None:
            return None
        if request_id in moves:
            return moveset.shown_id(request_id, moves[request_id])
        hidden = [k for k in moves if k.startswith("hiddenpower")]
        if request_id == "hiddenpower" and len(hidden) == 1:
            return moveset.shown_id(hidden[0], moves[hidden[0]])
        return request_id

    # --- the reference's tracker -----------------------------------------------------------------------------
    def update(self, battle: Any, request: dict[str, Any] | None = None) -> None:
        self._events(battle)
        self._own(battle, request)
        for key, mon in battle.opponent_team.items():
            if not mon.species:
                continue
            status = self.status_of(battle, mon)
            entry = self.seen.get(mon.species) or _Seen(mon.species, v1_percent(mon.current_hp_fraction), status)
            entry.hp = v1_percent(mon.current_hp_fraction)
            entry.status = status
            for move_id in self.moves.get(key, {}):
                if move_id not in entry.moves:
                    entry.moves.append(move_id)
            if mon.item is not None:
                entry.item = mon.item
            copy = self.copies.get(mon.species)
            if copy is not None:  # 0.8 kept a transformed Pokémon's copied base stats after the switch-out
                entry.transform_speed = copy.speed
            ability = self.opponent_ability(key)
            if ability is not None:
                entry.ability = ability
            self.seen[mon.species] = entry
