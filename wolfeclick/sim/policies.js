// Rollout policies that decide inside the simulator process (issue 48): read the simulator's own request and battle
// objects, answer with a choice string, and draw any randomness from the PRNG they are handed (Showdown's seeded
// generator), never from Math.random, so a seeded rollout repeats exactly. Used by the bridge's `playout` op
// (PROTOCOL.md); the analysis names them `sim:random`, `sim:maxdamage` and `sim:heuristic` (docs/analysis.md).
'use strict';

const MAX_MOVES = 4;
const MAX_SWITCHES = 5;

function toID(text) {
  return String(text || '').toLowerCase().replace(/[^a-z0-9]/g, '');
}

function speciesOf(details) {
  return String(details || '').split(',')[0].trim();
}

// What the side may do now, in the order `wolfeclick.game.actions.legal_actions` lists it (moves first, then
// switches; team-preview leads), each with what the policies read: the move's data or the Pokémon itself. After
// Revival Blessing the request is a forced switch whose active Pokémon is `reviving`: its "switches" are the
// fainted Pokémon, the one the move brings back (and only a fainted one), as the Python side lists them.
function legalChoices(battle, side, request) {
  if (!request || request.wait) return [];
  const team = (request.side && request.side.pokemon) || [];
  if (request.teamPreview) {
    return team.map((mon, i) => ({kind: 'team', slot: i + 1, name: speciesOf(mon.details), mon: side.pokemon[i]}));
  }
  const forced = (request.forceSwitch || []).some(Boolean);
  const active = (request.active && request.active[0]) || {};
  const choices = [];
  if (!forced) {
    (active.moves || []).forEach((move, i) => {
      if (move.disabled || choices.length >= MAX_MOVES) return;
      const name = move.move || move.id;
      choices.push({kind: 'move', slot: i + 1, name, move: battle.dex.moves.get(move.id || name)});
    });
  }
  const reviving = forced && team.some((mon) => mon.active && mon.reviving);
  if (!active.trapped || forced) {
    let switches = 0;
    team.forEach((mon, i) => {
      const fainted = String(mon.condition || '').endsWith(' fnt');
      if (mon.active || fainted !== reviving || switches >= MAX_SWITCHES) return;
      switches++;
      choices.push({kind: 'switch', slot: i + 1, name: speciesOf(mon.details), mon: side.pokemon[i]});
    });
  }
  return choices;
}

// The choice string for an action as the analysis records it ({action, choice}: a move, switch or lead by name),
// matched as the Python side matches it (the legal action of that kind whose name or id is the choice); null when
// it is not legal here.
function resolveChoice(battle, side, request, action) {
  const wanted = toID(action.choice);
  const found = legalChoices(battle, side, request).find(
    (c) => c.kind === action.action && (c.name === action.choice || toID(c.name) === wanted));
  return found ? `${found.kind} ${found.slot}` : null;
}

function foeActive(side) {
  return side.foe.active[0];
}

// Type effectiveness as a multiplier (0 for an immunity), for an attacking type against a Pokémon.
function effectiveness(battle, type, target) {
  if (!target || !battle.dex.getImmunity(type, target)) return target ? 0 : 1;
  return 2 ** battle.dex.getEffectiveness(type, target);
}

function basePower(move) {
  return move.category === 'Status' ? 0 : (move.basePower || 0);
}

// Expected damage, roughly: power × STAB × effectiveness × accuracy × the attacking stat over the defending one.
function moveScore(battle, user, move, target) {
  const power = basePower(move);
  if (!power || !target) return power;
  const physical = move.category === 'Physical';
  const attack = user.getStat(physical ? 'atk' : 'spa', false, true); // boosts, no events: a read, not a turn
  const defence = Math.max(1, target.getStat(physical ? 'def' : 'spd', false, true));
  const accuracy = move.accuracy === true ? 1 : (move.accuracy || 100) / 100;
  const stab = user.hasType(move.type) ? 1.5 : 1;
  return power * stab * effectiveness(battle, move.type, target) * accuracy * attack / defence;
}

// How well `mon` stands against `foe` by types alone: its best attacking type's multiplier over the foe's.
function matchup(battle, mon, foe) {
  if (!mon || !foe) return 0;
  const mine = Math.max(...mon.getTypes().map((t) => effectiveness(battle, t, foe)));
  const theirs = Math.max(...foe.getTypes().map((t) => effectiveness(battle, t, mon)));
  return Math.log2(Math.max(mine, 0.25)) - Math.log2(Math.max(theirs, 0.25));
}

function pick(prng, items) {
  return items[prng.random(items.length)];
}

function command(choice) {
  return `${choice.kind} ${choice.slot}`;
}

const POLICIES = {
  // Any legal choice, uniformly.
  random(battle, side, request, prng) {
    const choices = legalChoices(battle, side, request);
    return choices.length ? command(pick(prng, choices)) : 'default';
  },

  // The move of the highest base power (the first on ties), as poke-env's MaxBasePowerPlayer; otherwise random.
  maxdamage(battle, side, request, prng) {
    const choices = legalChoices(battle, side, request);
    const moves = choices.filter((c) => c.kind === 'move');
    if (!moves.length) return choices.length ? command(pick(prng, choices)) : 'default';
    return command(moves.reduce((best, c) => (basePower(c.move) > basePower(best.move) ? c : best)));
  },

  // The move of the highest expected damage; switch to the best-matched Pokémon when forced, or when the active
  // one is badly matched and a teammate is clearly better; leads by matchup. Ties go to the first.
  heuristic(battle, side, request, prng) {
    const choices = legalChoices(battle, side, request);
    if (!choices.length) return 'default';
    const foe = foeActive(side);
    const best = (items, score) => items.reduce((a, b) => (score(b) > score(a) ? b : a));
    const switches = choices.filter((c) => c.kind === 'switch' || c.kind === 'team');
    const moves = choices.filter((c) => c.kind === 'move');
    const standing = (c) => matchup(battle, c.mon, foe);
    if (!moves.length) return command(switches.length ? best(switches, standing) : pick(prng, choices));
    const user = side.active[0];
    const top = best(moves, (c) => moveScore(battle, user, c.move, foe));
    if (switches.length) {
      const here = matchup(battle, user, foe);
      const there = best(switches, standing);
      if (here <= -1 && standing(there) >= here + 2 && user.hp > user.maxhp / 4) return command(there);
    }
    return command(top);
  },
};

module.exports = {POLICIES, legalChoices, resolveChoice};
