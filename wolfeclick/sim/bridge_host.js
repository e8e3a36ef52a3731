// WolfeClick simulator host: many Pokémon Showdown battles in one Node process, driven over JSON lines on stdio.
// The protocol is written down in PROTOCOL.md beside this file. Each request is answered by exactly one response
// holding every chunk the simulator produced for it, so the Python side sees one totally ordered stream per battle.
//
// This module holds the host; it is started two ways, which differ only in how Showdown got loaded: `bridge.js`
// requires it (through the compile cache), `snapshot.js` loads it into a V8 startup snapshot that a simulator process
// starts from (Showdown and the random formats' data already loaded). `bind` hands it Showdown's parts, `serve`
// answers stdin.
'use strict';

const readline = require('readline');
const {POLICIES, resolveChoice} = require('./policies');

// Showdown's parts, bound once before `serve` (see above).
let BattleStream, Dex, Teams, TeamValidator, State, PRNG, showdownVersion, startInfo;

// `showdown`: the package's exports with `State`, `PRNG` and its `version`; `start`: what `hello` says of how this
// process started (`kind`: "plain" or "snapshot"; `compileCache()`: the compile cache's counts).
function bind(showdown, start) {
  ({BattleStream, Dex, Teams, TeamValidator, State, PRNG} = showdown);
  showdownVersion = showdown.version;
  startInfo = start;
}

const battles = new Map();
const snapshots = new Map();

// A BattleStream whose output is collected synchronously: writing a line runs the battle to its next waiting
// point, and everything it said is in `chunks` when `feed` returns.
function openStream() {
  const stream = new BattleStream();
  const chunks = [];
  stream.push = (chunk) => { chunks.push(chunk); };
  stream.pushEnd = () => {};
  stream.pushError = (err) => { throw err; };
  return {
    stream,
    feed(lines) {
      for (const line of lines) stream._write(line);
      return chunks.splice(0);
    },
  };
}

// The door: BattleStream obeys `>eval` (runs JavaScript), `>requestexport`, `>chat` and more. Only the lines a
// battle needs get through, one line each, and every field decoded from a `>start`/`>player` line is checked too;
// anything else refuses the whole request before a line is fed. The same rules are `check_input_line` in
// protocol.py (kept in step; both are tested against the same cases). Lengths count code points on both sides
// (the `u` flag and `[...text]`), never UTF-16 units. To admit another command, add its rule to ADMISSIONS (a line
// pattern) or OPTION_RULES (a `>command {json}` with a rule per field), and the same in protocol.py.
const MAX_INPUT_LINE = 4096;
const MAX_CHOICE = 300;
const MAX_NAME = 100;
const MAX_RATED = 100;
const BREAK_CHARS = '\\x00-\\x1f\\x7f\\x85\\u2028\\u2029\\ud800-\\udfff';
const BREAKS = new RegExp(`[${BREAK_CHARS}]`, 'u');
const SIDE_CHOICE = new RegExp(`^>(p1|p2) [^ ${BREAK_CHARS}][^${BREAK_CHARS}]{0,${MAX_CHOICE - 1}}$`, 'u');
const ENDING = /^(>(forcewin|forcelose) (p1|p2)|>forcetie)$/u;
const ADMISSIONS = [SIDE_CHOICE, ENDING];
const JSON_COMMAND = /^>(start|player p1|player p2) (\{.*\})$/u;
const NAME = new RegExp(`^[^ |${BREAK_CHARS}][^|${BREAK_CHARS}]{0,${MAX_NAME - 1}}$`, 'u');
const RATED = new RegExp(`^[^|${BREAK_CHARS}]{0,${MAX_RATED}}$`, 'u');
// empty in a random format's input log as a server writes it (`"team":""`): the simulator generates the team
const TEAM = new RegExp(`^[^${BREAK_CHARS}]{0,${MAX_INPUT_LINE}}$`, 'u');
const FORMAT_ID = /^[a-z0-9]{1,60}$/u;
const SEED_TEXT = /^([0-9]{1,5}(,[0-9]{1,5}){3}|sodium,[0-9a-f]{1,64}|gen5,[0-9a-f]{16})$/u;
const ALLOWED_INPUT = '>start {json}, >player p1|p2 {json}, >p1/>p2 choices, >forcewin/>forcelose p1|p2, >forcetie';

// Code points, as Python's len() counts them (a text of no more UTF-16 units than the limit is within it anyway).
function codePoints(text) {
  return text.length <= MAX_INPUT_LINE ? text.length : [...text].length;
}

// The offending text, cut short and escaped so that the error stays one line for every reader.
function cut(text) {
  const points = [...text];
  const quoted = JSON.stringify(points.length <= 60 ? text : points.slice(0, 60).join('') + '…');
  return quoted.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function textRule(pattern, what) {
  return (value) => (typeof value === 'string' && pattern.test(value) ? null : what);
}

// The analysis' fresh luck after a replayed prefix: `>reseed a,b,c,d`, four plain 16-bit words (Showdown's Gen 5
// generator form) and no other spelling. Same rule as `is_reseed_line` in protocol.py.
const RESEED = /^>reseed (0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4})$/;

function isReseed(line) {
  const match = RESEED.exec(line);
  return !!match && match.slice(1).every((word) => Number(word) <= 0xffff);
}

function whole(value, low, high) {
  return typeof value === 'number' && Number.isInteger(value) && value >= low && value <= high;
}

function seedRule(value) {
  if (Array.isArray(value) && value.length === 4 && value.every((v) => whole(v, 0, 0xffff))) return null;
  if (typeof value === 'string' && SEED_TEXT.test(value)) return null;
  return "a seed is four integers 0-65535 (or Showdown's seed text)";
}

function ratedRule(value) {
  if (typeof value === 'boolean' || (typeof value === 'string' && RATED.test(value))) return null;
  return `rated is true, false or a text of at most ${MAX_RATED} characters without '|' or line breaks`;
}

// Each `>command {json}`: the fields it may carry and the rule for each (null when the value is fine).
const OPTION_RULES = {
  start: {
    formatid: textRule(FORMAT_ID, 'a format id is 1-60 lower-case letters and digits'),
    seed: seedRule,
    rated: ratedRule,
  },
  player: {
    name: textRule(NAME, `a name is 1-${MAX_NAME} characters without '|' or line breaks, not starting with a space`),
    seed: seedRule,
    team: textRule(TEAM, 'a team is packed text without line breaks (empty: generated)'),
  },
};

function checkLine(line) {
  if (typeof line !== 'string') throw new Error(`not a text line: ${cut(String(line))}`);
  if (SIDE_CHOICE.test(line)) return;
  const length = codePoints(line);
  if (length > MAX_INPUT_LINE) throw new Error(`line of ${length} characters is longer than ${MAX_INPUT_LINE}`);
  if (BREAKS.test(line)) throw new Error(`line break or control character inside ${cut(line)}`);
  if (ADMISSIONS.some((admitted) => admitted.test(line))) return;
  if (isReseed(line)) return; // the analysis' fresh luck, in one exact form
  const match = JSON_COMMAND.exec(line);
  if (!match) throw new Error(`command not allowed: ${cut(line)}`);
  let options;
  try {
    options = JSON.parse(match[2]);
  } catch (err) {
    throw new Error(`options are not JSON: ${cut(line)}`);
  }
  const rules = OPTION_RULES[match[1].split(' ')[0]];
  const names = Object.keys(rules).sort().join(', ');
  if (!options || typeof options !== 'object' || Array.isArray(options) ||
      !Object.keys(options).every((key) => Object.prototype.hasOwnProperty.call(rules, key))) {
    throw new Error(`options not allowed (only ${names}): ${cut(line)}`);
  }
  for (const [key, value] of Object.entries(options)) {
    const wrong = rules[key](value);
    if (wrong !== null) throw new Error(`option ${key} refused (${wrong}): ${cut(line)}`);
  }
}

function checkLines(lines) {
  if (!Array.isArray(lines)) throw new Error('input lines must be a list of strings');
  lines.forEach((line, index) => {
    try {
      checkLine(line);
    } catch (err) {
      throw new Error(`input entry ${index} refused: ${err.message} (allowed: ${ALLOWED_INPUT})`);
    }
  });
  return lines;
}

// The format a `>start` line names, checked as `format` is: a battle plays the format it was admitted for.
function startFormat(lines) {
  const line = lines.find((l) => l.startsWith('>start '));
  return line ? JSON.parse(line.slice('>start '.length)).formatid : undefined;
}

// Showdown would quietly play an unknown format id as a custom game; refuse it, and any format that is not singles.
// A random-battle format generates its teams from the player seeds; any other format plays the teams it is given
// (`team` on each `>player` line), which must pass the format's own validator.
function checkFormat(id) {
  const format = Dex.formats.get(id);
  if (!format.exists || format.effectType !== 'Format') throw new Error(`unknown format '${id}'`);
  if (format.gameType !== 'singles') {
    throw new Error(`'${id}' is a ${format.gameType} format; only singles formats are supported`);
  }
  const generated = !!format.team;
  const preview = Dex.formats.getRuleTable(format).has('teampreview');
  return {id: format.id, name: format.name, teams: generated ? 'random' : 'given', preview};
}

// The validator's reasons as one line: it writes some of them over several lines.
function oneLine(problems) {
  return problems.map((p) => String(p).replace(/\s*\n\s*/g, ' ').trim()).filter(Boolean).join('; ');
}

// A team in any form Showdown imports (export text, packed, JSON), validated for the format; returns it packed.
function validateTeam(formatId, text) {
  const info = checkFormat(formatId);
  if (info.teams === 'random') throw new Error(`'${info.id}' generates its own teams; it takes none`);
  if (typeof text !== 'string' || !text.trim()) throw new Error('the team is empty');
  const team = Teams.import(text.replace(/\r\n?/g, '\n'));
  if (!team || !team.length) throw new Error('the team could not be read (expected Showdown export text or a packed team)');
  const problems = TeamValidator.get(info.id).validateTeam(team);
  if (problems && problems.length) throw new Error(`team not legal in ${info.name}: ${oneLine(problems)}`);
  return {format: info.id, team: Teams.pack(team), species: team.map((set) => set.species)};
}

// Before a battle of a given-team format starts: every player line carries a team the validator accepts.
function checkTeams(info, lines) {
  if (info.teams === 'random') return;
  for (const side of ['p1', 'p2']) {
    const line = lines.find((l) => l.startsWith(`>player ${side} `));
    const team = line ? JSON.parse(line.slice(`>player ${side} `.length)).team : undefined;
    if (!team) throw new Error(`'${info.id}' needs a team for each side (${side} has none): give one with --team1/--team2 or --teams DIR`);
    validateTeam(info.id, team);
  }
}

function handle(req) {
  switch (req.op) {
    case 'hello':
      return {showdown: showdownVersion, node: process.version, pid: process.pid, start: startInfo.kind,
              compile_cache: startInfo.compileCache()};
    case 'format':
      return checkFormat(req.format);
    case 'validate-team':
      return validateTeam(req.format, req.team);
    case 'start': {
      if (battles.has(req.battle)) throw new Error(`battle ${req.battle} already exists`);
      const info = checkFormat(req.format);
      checkLines(req.lines);
      const named = startFormat(req.lines);
      if (named !== undefined && checkFormat(named).id !== info.id) {
        throw new Error(`the >start line names '${named}', not the format '${info.id}' the battle was started for`);
      }
      checkTeams(info, req.lines);
      const host = openStream();
      battles.set(req.battle, host);
      return answer(req.battle, host, host.feed(req.lines));
    }
    case 'replay': {
      // A recorded battle in one request (a server log's import): checked and started as `start` starts one with
      // its first `opening` lines, then fed each later line alone, as a `write` of it would, until the battle ends.
      // Every line's output is kept apart (`outs`), so the caller can answer its own writes from them; nothing is
      // kept here.
      const info = checkFormat(req.format);
      checkLines(req.lines);
      if (!whole(req.opening, 1, req.lines.length)) throw new Error('opening must count 1 or more of the lines');
      const opening = req.lines.slice(0, req.opening);
      const named = startFormat(opening);
      if (named !== undefined && checkFormat(named).id !== info.id) {
        throw new Error(`the >start line names '${named}', not the format '${info.id}' the battle was started for`);
      }
      checkTeams(info, opening);
      const host = openStream();
      const out = host.feed(opening);
      const outs = [];
      for (const line of req.lines.slice(req.opening)) {
        if (host.stream.battle && host.stream.battle.ended) break;
        outs.push(host.feed([line]));
      }
      const battle = host.stream.battle;
      const ended = !!(battle && battle.ended);
      return {out, outs, ended, inputlog: ended ? battle.inputLog.slice() : []};
    }
    case 'write': {
      const host = battles.get(req.battle);
      if (!host) throw new Error(`no battle ${req.battle}`);
      return answer(req.battle, host, host.feed(checkLines(req.lines)));
    }
    case 'close': {
      const host = battles.get(req.battle);
      battles.delete(req.battle);
      return {out: [], ended: true, inputlog: host && host.stream.battle ? host.stream.battle.inputLog.slice() : []};
    }
    case 'snapshot': {
      // A battle frozen at its waiting point (State.serializeBattle), for `fork` to start copies from.
      const host = battles.get(req.battle);
      if (!host || !host.stream.battle) throw new Error(`no battle ${req.battle}`);
      // kept as text: a deserialized battle shares the arrays of the object it was made from
      snapshots.set(req.snapshot, JSON.stringify(State.serializeBattle(host.stream.battle)));
      return {out: [], ended: false};
    }
    case 'fork': {
      // A new battle from a snapshot, then `lines` (through the same door): the analysis' copies of one decision.
      const state = snapshots.get(req.snapshot);
      if (state === undefined) throw new Error(`no snapshot ${req.snapshot}`);
      if (battles.has(req.battle)) throw new Error(`battle ${req.battle} already exists`);
      checkLines(req.lines);
      const host = openStream();
      const battle = State.deserializeBattle(state);
      battle.restart((type, data) => host.stream.pushMessage(type, Array.isArray(data) ? data.join('\n') : data));
      host.stream.battle = battle;
      battles.set(req.battle, host);
      return answer(req.battle, host, host.feed(req.lines));
    }
    case 'playout':
      return playout(req);
    case 'set-tally':
      return setTally(req);
    case 'world':
      return buildWorld(req);
    case 'forget':
      snapshots.delete(req.snapshot);
      return {out: [], ended: false};
    case 'reset': {
      // Every battle and snapshot dropped: the process is as a fresh one, for its next user (sim/lending.py).
      const dropped = {battles: battles.size, snapshots: snapshots.size};
      battles.clear();
      snapshots.clear();
      return dropped;
    }
    case 'resim': {
      checkLines(req.lines);
      const named = startFormat(req.lines);
      if (named !== undefined) checkFormat(named);
      const host = openStream();
      const out = host.feed(req.lines);
      return {out};
    }
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

// A whole rollout in this process (issue 48): a copy of a snapshot fed `lines` (its reseed) through the door, then
// both sides decided by one of policies.js until the battle ends or passes `maxTurns` (a tie, as the runner has it).
// `first` forces a side's first choice, named as the analysis records it. The policy draws from a PRNG seeded with
// `seed`, so the same request gives the same winner. Only the winner comes back; nothing is kept.
// How well a side stands when a rollout is cut at its horizon, 0-1 (the search's levels 2-3; `left` is level 1's):
// each Pokémon still up counts 0.3 for being there plus its HP share, less its status (sleep, paralysis, burn 0.25,
// toxic 0.3, poison 0.1, freeze 0.4); the active one's boosts count 0.05 a stage (attack, special attack, speed;
// 0.025 defences, at most 3 stages each); hazards cost each Pokémon still up in the back; over the team's most.
const STATUS_COST = {slp: 0.25, par: 0.25, brn: 0.25, tox: 0.3, psn: 0.1, frz: 0.4};
const BOOST_WORTH = {atk: 0.05, spa: 0.05, spe: 0.05, def: 0.025, spd: 0.025};
const HAZARD_COST = {stealthrock: 0.1, spikes: 0.07, toxicspikes: 0.07, stickyweb: 0.05};
function standing(side) {
  let sum = 0;
  let back = 0;
  for (const mon of side.pokemon) {
    if (mon.fainted || mon.hp <= 0) continue;
    sum += 0.3 + mon.hp / mon.maxhp - (STATUS_COST[mon.status] || 0);
    if (mon.isActive) {
      for (const [stat, worth] of Object.entries(BOOST_WORTH)) {
        sum += worth * Math.max(-3, Math.min(3, mon.boosts[stat] || 0));
      }
    } else {
      back++;
    }
  }
  for (const [id, cost] of Object.entries(HAZARD_COST)) {
    const hazard = side.sideConditions[id];
    if (hazard) sum -= cost * (hazard.layers || 1) * back;
  }
  return Math.max(0, Math.min(1, sum / (1.3 * side.pokemon.length)));
}

function playout(req) {
  const state = snapshots.get(req.snapshot);
  if (state === undefined) throw new Error(`no snapshot ${req.snapshot}`);
  // `policy` names one policy for both sides, or {p1, p2} one each (to measure them against each other)
  const named = typeof req.policy === 'object' && req.policy !== null ? req.policy : {p1: req.policy, p2: req.policy};
  const policies = {};
  for (const side of ['p1', 'p2']) {
    const name = named[side];
    if (typeof name !== 'string' || !Object.prototype.hasOwnProperty.call(POLICIES, name)) {
      throw new Error(`unknown simulator policy ${cut(String(name))} (${Object.keys(POLICIES).join(', ')})`);
    }
    policies[side] = POLICIES[name];
  }
  if (!Array.isArray(req.seed) || seedRule(req.seed) !== null) throw new Error('seed must be four integers 0-65535');
  if (!whole(req.maxTurns, 1, 100000)) throw new Error('maxTurns must be a whole number 1-100000');
  const first = req.first || {};
  for (const [side, action] of Object.entries(first)) {
    if (!['p1', 'p2'].includes(side) || !action || typeof action.action !== 'string' || typeof action.choice !== 'string') {
      throw new Error('first maps p1/p2 to {action, choice}');
    }
  }
  checkLines(req.lines);
  const host = openStream();
  const battle = State.deserializeBattle(state);
  battle.restart((type, data) => host.stream.pushMessage(type, Array.isArray(data) ? data.join('\n') : data));
  host.stream.battle = battle;
  host.feed(req.lines);
  const prng = new PRNG(req.seed);
  const pending = {...first};
  if (req.horizon !== undefined && !whole(req.horizon, 1, 1000)) throw new Error('horizon must be a whole number 1-1000');
  const lastTurn = req.horizon !== undefined ? Math.min(req.maxTurns, battle.turn + req.horizon - 1) : req.maxTurns;
  const refused = {p1: 0, p2: 0};
  while (!battle.ended && battle.turn <= lastTurn) {
    const side = battle.sides.find((s) => s.activeRequest && !s.activeRequest.wait && !s.isChoiceDone());
    if (!side) throw new Error(`rollout stalled at turn ${battle.turn}: no side to decide`);
    const request = side.activeRequest;
    let choice;
    if (pending[side.id]) {
      choice = resolveChoice(battle, side, request, pending[side.id]);
      if (choice === null) {
        throw new Error(`${pending[side.id].action} ${pending[side.id].choice} is not legal for ${side.id} here`);
      }
      if (pending[side.id].tera === true) {
        // the search's "this move, terastallizing": only where the side may still terastallize
        const active = (request.active && request.active[0]) || {};
        if (!choice.startsWith('move ') || !active.canTerastallize) {
          throw new Error(`${side.id} cannot terastallize here`);
        }
        choice += ' terastallize';
      }
      delete pending[side.id];
    } else {
      choice = refused[side.id] >= 3 ? 'default' : policies[side.id](battle, side, request, prng);
    }
    host.feed([`>${side.id} ${choice}`]); // its output is dropped unread
    // a refused choice leaves the side undecided on the same request: after a few, let the simulator choose
    refused[side.id] = side.activeRequest === request && !side.isChoiceDone() ? refused[side.id] + 1 : 0;
  }
  const winner = battle.ended ? (battle.winner === battle.p1.name ? 'p1' : battle.winner === battle.p2.name ? 'p2' : null) : null;
  const stopped = battle.turn > req.maxTurns ? 'turn limit' : 'horizon';
  const reply = {winner, reason: battle.ended ? (winner ? 'win' : 'tie') : stopped, turns: battle.turn};
  if (req.inputlog === true) reply.inputlog = battle.inputLog.slice();
  if (req.horizon !== undefined) {
    // what each side has left, as a fraction of its whole team's HP: the search's value of a cut-short rollout
    reply.left = {};
    for (const side of battle.sides) {
      reply.left[side.id] = side.pokemon.reduce((sum, mon) => sum + (mon.fainted ? 0 : mon.hp / mon.maxhp), 0) /
        side.pokemon.length;
    }
    reply.standing = {};
    for (const side of battle.sides) reply.standing[side.id] = standing(side);
  }
  return reply;
}

// What the format's own team generator makes (issue 61): `teams` random teams drawn from a generator seeded with
// `seed`, every set tallied by species (level, moves, ability, item, tera type, EVs, IVs, role) with its count.
// The search policy's sampler weighs the opponent's unseen sets by these counts (wolfeclick/sim/setdata.py).
function setTally(req) {
  const info = checkFormat(req.format);
  if (info.teams !== 'random') throw new Error(`'${info.id}' plays given teams; only a random format has a generator to tally`);
  if (!whole(req.teams, 1, 100000)) throw new Error('teams must be a whole number 1-100000');
  if (!Array.isArray(req.seed) || seedRule(req.seed) !== null) throw new Error('seed must be four integers 0-65535');
  const generator = Teams.getGenerator(info.id, req.seed);
  const species = {};
  for (let n = 0; n < req.teams; n++) {
    for (const set of generator.getTeam()) {
      const id = Dex.species.get(set.species).id;
      const entry = species[id] || (species[id] = {level: set.level, sets: {}});
      const moves = set.moves.map((m) => Dex.moves.get(m).id).sort();
      const record = {moves, ability: Dex.abilities.get(set.ability).id, item: Dex.items.get(set.item).id,
        teraType: set.teraType || '', evs: set.evs || {}, ivs: set.ivs || {}, role: set.role || '', level: set.level};
      const key = JSON.stringify(record);
      entry.sets[key] = (entry.sets[key] || 0) + 1;
    }
  }
  const out = {};
  for (const id of Object.keys(species).sort()) {
    out[id] = Object.entries(species[id].sets).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([key, count]) => ({...JSON.parse(key), count}));
  }
  return {format: info.id, teams: req.teams, species: out};
}

const STATUSES = ['brn', 'par', 'slp', 'frz', 'psn', 'tox'];
const WORLD_VOLATILES = ['substitute', 'leechseed', 'confusion', 'taunt', 'encore', 'yawn', 'perishsong', 'curse'];

// A battle made from one side's view and a sample of what that side cannot see (issue 61), frozen as a snapshot
// for `playout`. `sides.pN.team` is each side's sets in Showdown's JSON team form, the active Pokémon first;
// `sides.pN.mons[i]` the state of its i-th Pokémon: `hp` (points) or `hpFraction`, `fainted`, `status`, `boosts`,
// `stats` and `maxhp` (exact values the side's own request gives), `pp` (per move slot), `terastallized` (a type),
// `volatiles` (a few ids; any the simulator refuses is left out); `sides.pN.teraUsed`; `field`: `weather`,
// `weatherTurns`, `terrain`, `terrainTurns`, `pseudo` (ids), `conditions` ({pN: {id: layers}}); `turn`;
// `switching`: the sides that must choose a Pokémon to send in (else both choose a move). Nothing of any other
// battle is read: what the world holds is what the request holds. → {ended, deciding}.
function buildWorld(req) {
  const info = checkFormat(req.format);
  if (typeof req.snapshot !== 'string' || !req.snapshot) throw new Error('world needs a snapshot name');
  if (!Array.isArray(req.seed) || seedRule(req.seed) !== null) throw new Error('seed must be four integers 0-65535');
  const sides = req.sides || {};
  const lines = [`>start ${JSON.stringify({formatid: info.id, seed: req.seed})}`];
  for (const id of ['p1', 'p2']) {
    const view = sides[id];
    if (!view || !Array.isArray(view.team) || !view.team.length || view.team.length > 24) {
      throw new Error(`world: side ${id} needs a team of 1-24 sets`);
    }
    lines.push(`>player ${id} ${JSON.stringify({name: id, seed: req.seed, team: Teams.pack(view.team)})}`);
  }
  const host = openStream();
  host.feed(checkLines(lines));
  const battle = host.stream.battle;
  if (!battle || battle.ended) throw new Error('world: the battle did not start');
  const field = req.field || {};
  for (const side of battle.sides) {
    const view = sides[side.id];
    (view.mons || []).forEach((state, i) => placeMon(battle, side, side.pokemon[i], state || {}));
    if (view.teraUsed) side.pokemon.forEach((mon) => { mon.canTerastallize = null; });
  }
  const weather = field.weather ? String(field.weather) : '';
  if (weather && battle.field.weather !== Dex.conditions.get(weather).id) battle.field.setWeather(weather, 'debug');
  if (!weather && battle.field.weather) battle.field.clearWeather();
  if (battle.field.weather && whole(field.weatherTurns, 0, 100)) battle.field.weatherState.duration = field.weatherTurns;
  const terrain = field.terrain ? String(field.terrain) : '';
  if (terrain && battle.field.terrain !== Dex.conditions.get(terrain).id) battle.field.setTerrain(terrain, 'debug');
  if (!terrain && battle.field.terrain) battle.field.clearTerrain();
  if (battle.field.terrain && whole(field.terrainTurns, 0, 100)) battle.field.terrainState.duration = field.terrainTurns;
  for (const id of field.pseudo || []) tryEffect(() => battle.field.addPseudoWeather(String(id), 'debug'));
  for (const side of battle.sides) {
    for (const [id, layers] of Object.entries((field.conditions || {})[side.id] || {})) {
      tryEffect(() => side.addSideCondition(id, 'debug'));
      const condition = side.sideConditions[Dex.conditions.get(id).id];
      if (condition && whole(layers, 1, 3) && condition.layers !== undefined) condition.layers = layers;
    }
  }
  if (whole(req.turn, 1, 100000)) battle.turn = req.turn;
  const switching = Array.isArray(req.switching) ? req.switching : [];
  for (const side of battle.sides) {
    if (switching.includes(side.id) && side.active[0]) side.active[0].switchFlag = true;
  }
  battle.makeRequest(switching.length ? 'switch' : 'move');
  snapshots.set(req.snapshot, JSON.stringify(State.serializeBattle(battle)));
  const deciding = battle.sides.filter((s) => s.activeRequest && !s.activeRequest.wait).map((s) => s.id);
  const reply = {out: [], ended: !!battle.ended, deciding};
  // the world's own requests, to check a world against the view it was built from (tests)
  if (req.requests === true) reply.requests = {p1: battle.p1.activeRequest, p2: battle.p2.activeRequest};
  return reply;
}

// An effect the simulator will not take in this world (an immunity, a missing source) is left out: the world is a
// guess anyway, and the rest of it still stands.
function tryEffect(apply) {
  try {
    apply();
  } catch (err) {
    // left out
  }
}

function placeMon(battle, side, mon, state) {
  if (!mon) return;
  if (state.stats && typeof state.stats === 'object') {
    for (const stat of ['atk', 'def', 'spa', 'spd', 'spe']) {
      if (whole(state.stats[stat], 1, 10000)) mon.storedStats[stat] = mon.baseStoredStats[stat] = state.stats[stat];
    }
  }
  if (whole(state.maxhp, 1, 10000)) mon.maxhp = mon.baseMaxhp = state.maxhp;
  if (state.fainted) {
    mon.hp = 0;
    mon.fainted = true;
    mon.status = 'fnt';
    mon.isActive = false;
    if (side.pokemonLeft) side.pokemonLeft--;
    return;
  }
  if (whole(state.hp, 1, 10000)) mon.hp = Math.min(mon.maxhp, state.hp);
  else if (typeof state.hpFraction === 'number') {
    mon.hp = Math.max(1, Math.min(mon.maxhp, Math.round(state.hpFraction * mon.maxhp)));
  }
  if (STATUSES.includes(state.status)) {
    mon.status = state.status;
    mon.statusState = battle.initEffectState({id: state.status, target: mon});
    if (state.status === 'slp') Object.assign(mon.statusState, {startTime: 2, time: 2});
    if (state.status === 'tox') mon.statusState.stage = 0;
  }
  if (Array.isArray(state.pp)) {
    state.pp.forEach((pp, j) => { if (mon.moveSlots[j] && whole(pp, 0, 64)) mon.moveSlots[j].pp = pp; });
  }
  if (state.terastallized) {
    mon.teraType = String(state.terastallized);
    if (mon.isActive) tryEffect(() => battle.actions.terastallize(mon));
    else mon.terastallized = mon.teraType;
  }
  if (!mon.isActive) return;
  if (state.boosts && typeof state.boosts === 'object') {
    for (const stat of Object.keys(mon.boosts)) {
      mon.boosts[stat] = whole(state.boosts[stat], -6, 6) ? state.boosts[stat] : 0;
    }
  }
  for (const id of state.volatiles || []) {
    if (!WORLD_VOLATILES.includes(id)) continue;
    tryEffect(() => mon.addVolatile(id, side.foe.active[0]));
  }
  if (typeof state.lockedMove === 'string' && state.lockedMove) {
    mon.volatiles.choicelock = battle.initEffectState({id: 'choicelock', target: mon, move: state.lockedMove});
  }
}

function answer(key, host, out) {
  const battle = host.stream.battle;
  const ended = !!(battle && battle.ended);
  const reply = {out, ended};
  if (ended) {
    reply.inputlog = battle.inputLog.slice();
    battles.delete(key);
  }
  return reply;
}

function serve() {
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  rl.on('line', (line) => {
    if (!line.trim()) return;
    let req;
    try {
      req = JSON.parse(line);
    } catch (err) {
      process.stdout.write(JSON.stringify({id: null, error: `bad request: ${err.message}`}) + '\n');
      return;
    }
    let reply;
    try {
      reply = handle(req);
    } catch (err) {
      reply = {error: String(err && err.message || err).split('\n')[0]};
    }
    reply.id = req.id;
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
  // Exit once every reply already written has left: a pipe the reader has not drained yet would otherwise be cut.
  rl.on('close', () => process.stdout.write('', () => process.exit(0)));
}

module.exports = {bind, serve};
