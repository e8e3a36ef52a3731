// WolfeClick simulator host: many Pokémon Showdown battles in one Node process, driven over JSON lines on stdio.
// The protocol is written down in PROTOCOL.md beside this file. Each request is answered by exactly one response
// holding every chunk the simulator produced for it, so the Python side sees one totally ordered stream per battle.
'use strict';

const path = require('path');
const readline = require('readline');

const showdownRoot = process.env.WOLFECLICK_SHOWDOWN || path.join(__dirname, '..', '..', 'node_modules', 'pokemon-showdown');
const {BattleStream, Dex} = require(showdownRoot);
const showdownVersion = require(path.join(showdownRoot, 'package.json')).version;

const battles = new Map();

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

// Showdown would quietly play an unknown format id as a custom game; refuse anything but a random-team singles format.
function checkFormat(id) {
  const format = Dex.formats.get(id);
  if (!format.exists || format.effectType !== 'Format') throw new Error(`unknown format '${id}'`);
  if (format.team !== 'random') {
    throw new Error(`'${id}' has no generated teams; use a random-battle format (gen1randombattle ... gen9randombattle)`);
  }
  if (format.gameType !== 'singles') throw new Error(`'${id}' is a ${format.gameType} format; only singles is supported`);
  return {id: format.id, name: format.name};
}

function handle(req) {
  switch (req.op) {
    case 'hello':
      return {showdown: showdownVersion, node: process.version, pid: process.pid};
    case 'format':
      return checkFormat(req.format);
    case 'start': {
      if (battles.has(req.battle)) throw new Error(`battle ${req.battle} already exists`);
      checkFormat(req.format);
      const host = openStream();
      battles.set(req.battle, host);
      return answer(req.battle, host, host.feed(req.lines));
    }
    case 'write': {
      const host = battles.get(req.battle);
      if (!host) throw new Error(`no battle ${req.battle}`);
      return answer(req.battle, host, host.feed(req.lines));
    }
    case 'close': {
      const host = battles.get(req.battle);
      battles.delete(req.battle);
      return {out: [], ended: true, inputlog: host && host.stream.battle ? host.stream.battle.inputLog.slice() : []};
    }
    case 'resim': {
      const host = openStream();
      const out = host.feed(req.lines);
      return {out};
    }
    default:
      throw new Error(`unknown op ${req.op}`);
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
rl.on('close', () => process.exit(0));
