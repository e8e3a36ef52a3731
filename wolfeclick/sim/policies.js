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

// `simple` (issue 61): a rollout model of poke-env's SimpleHeuristicsPlayer, the opponent the search is measured
// against, written from its documented rules (not its code): a matchup counts types as multipliers, base speed and
// HP; it switches out to a teammate that matches well when the active one is badly matched or its defences (or its
// main attacking stat) are down three stages; it lays a hazard the foe lacks while three foes or more are up, spins
// or defogs its own side's conditions away, otherwise attacks with the best base power x STAB x a base-stat ratio x
// accuracy x hits x type multiplier. Two of its rules never fire as poke-env 0.16.1 plays here, so neither does
// here: setting up (it compares the move's target, an enum there, with a string) and terastallizing (the active
// Pokémon's tera type reads None in its battle). Reads the simulator's true state (a rollout knows its world).
// Deterministic: no randomness unless nothing fits.
const HAZARD_MOVES = {spikes: 'spikes', stealthrock: 'stealthrock', stickyweb: 'stickyweb', toxicspikes: 'toxicspikes'};
const HAZARD_REMOVAL = new Set(['rapidspin', 'defog']);

function typeMultiplier(battle, type, types) {
  // `types`: a Pokémon or a type (a tera type); an immunity is 0
  if (!battle.dex.getImmunity(type, types)) return 0;
  return 2 ** battle.dex.getEffectiveness(type, types);
}

function hpShare(mon) {
  return mon && mon.maxhp ? mon.hp / mon.maxhp : 0;
}

function simpleMatchup(battle, mon, foe) {
  if (!mon || !foe) return 0;
  let score = Math.max(...mon.getTypes().map((t) => typeMultiplier(battle, t, foe)));
  score -= Math.max(...foe.getTypes().map((t) => typeMultiplier(battle, t, mon)));
  const mine = mon.species.baseStats.spe;
  const theirs = foe.species.baseStats.spe;
  score += mine > theirs ? 0.1 : mine < theirs ? -0.1 : 0;
  return score + 0.4 * hpShare(mon) - 0.4 * hpShare(foe);
}

// A base stat with its boost, as the heuristic estimates it (its boost factor for +1 is 2, kept as it has it).
function statEstimate(mon, stat) {
  const stage = mon.boosts[stat] || 0;
  const factor = stage > 1 ? (2 + stage) / 2 : 2 / (2 - stage);
  return (2 * mon.species.baseStats[stat] + 36) * factor;
}

function expectedHits(move) {
  if (move.id === 'triplekick' || move.id === 'tripleaxel') return 1 + 2 * 0.9 + 3 * 0.81;
  if (Array.isArray(move.multihit)) return move.multihit[0] === move.multihit[1] ? move.multihit[0] : 3.1;
  return move.multihit || 1;
}

function shouldSwitchOut(battle, user, foe, switches) {
  if (!switches.some((c) => simpleMatchup(battle, c.mon, foe) > 0)) return false;
  const b = user.boosts;
  if (b.def <= -3 || b.spd <= -3) return true;
  const atk = user.getStat('atk', true, true);
  const spa = user.getStat('spa', true, true);
  if (b.atk <= -3 && atk >= spa) return true;
  if (b.spa <= -3 && atk <= spa) return true;
  return simpleMatchup(battle, user, foe) < -2;
}

POLICIES.simple = function simple(battle, side, request, prng) {
  const choices = legalChoices(battle, side, request);
  if (!choices.length) return 'default';
  const user = side.active[0];
  const foe = foeActive(side);
  if (!user || !foe || request.teamPreview) return command(pick(prng, choices));
  const switches = choices.filter((c) => c.kind === 'switch');
  const moves = choices.filter((c) => c.kind === 'move');
  const bestSwitch = () => switches.reduce((a, c) => (simpleMatchup(battle, c.mon, foe) > simpleMatchup(battle, a.mon, foe) ? c : a));
  if (moves.length && (!switches.length || !shouldSwitchOut(battle, user, foe, switches))) {
    const foesUp = 6 - side.foe.pokemon.filter((m) => m.fainted).length;
    const ownUp = side.pokemon.filter((m) => !m.fainted).length;
    for (const c of moves) {
      const hazard = HAZARD_MOVES[c.move.id];
      if (hazard && foesUp >= 3 && !side.foe.sideConditions[hazard]) return command(c);
      if (!hazard && HAZARD_REMOVAL.has(c.move.id) && Object.keys(side.sideConditions).length && ownUp >= 2) {
        return command(c);
      }
    }
    const physical = statEstimate(user, 'atk') / statEstimate(foe, 'def');
    const special = statEstimate(user, 'spa') / statEstimate(foe, 'spd');
    const score = (c) => {
      const move = c.move;
      const accuracy = move.accuracy === true ? 1 : (move.accuracy || 0) / 100;
      return (move.basePower || 0) * (user.getTypes().includes(move.type) ? 1.5 : 1) *
        (move.category === 'Physical' ? physical : special) * accuracy * expectedHits(move) *
        typeMultiplier(battle, move.type, foe);
    };
    const top = moves.reduce((a, c) => (score(c) > score(a) ? c : a));
    return command(top);
  }
  if (switches.length) return command(bestSwitch());
  return command(pick(prng, choices));
};

module.exports = {POLICIES, legalChoices, resolveChoice};
