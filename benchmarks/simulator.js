// Showdown alone, replaying an analysis' rollouts: the simulator CPU that no Python-side or bridge change can remove.
// Reads JSON on stdin: {showdown, groups: [{prefix: [lines], rollouts: [[lines after the prefix]...],
// winners: [name or null...]}]}. Per group the prefix is played once and frozen (State.serializeBattle, as the
// bridge's `snapshot`); each rollout is a copy of it (deserializeBattle, as the bridge's `fork`) fed its own input
// lines in one go, so no request, reply or pipe is involved: only Showdown's battle engine and its output strings.
// Each rollout must end with the winner the analysis saw (else it exits 1: the replay was not exact). Plays the
// whole set `rounds` times on one process (Node's JIT warms over the first) and prints one JSON line per round.
// Run by benchmarks/simulator.py (python -m benchmarks.simulator); not part of the product.
'use strict';

const path = require('path');

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const {BattleStream} = require(input.showdown);
const {State} = require(path.join(input.showdown, 'dist', 'sim', 'state'));

function stream() {
  const battleStream = new BattleStream();
  battleStream.push = () => {};
  battleStream.pushEnd = () => {};
  battleStream.pushError = (err) => { throw err; };
  return battleStream;
}

function winnerOf(battle) {
  return battle.ended ? (battle.winner || null) : 'unfinished';
}

const snapshots = input.groups.map((group) => {
  const battleStream = stream();
  for (const line of group.prefix) battleStream._write(line);
  return JSON.stringify(State.serializeBattle(battleStream.battle));
});

for (let round = 0; round < (input.rounds || 2); round++) {
  const started = process.cpuUsage();
  const wall = process.hrtime.bigint();
  let rollouts = 0;
  let forkMicros = 0;
  input.groups.forEach((group, index) => {
    group.rollouts.forEach((lines, number) => {
      const forkStarted = process.cpuUsage();
      const battleStream = stream();
      const battle = State.deserializeBattle(snapshots[index]);
      battle.restart((type, data) => battleStream.pushMessage(type, Array.isArray(data) ? data.join('\n') : data));
      battleStream.battle = battle;
      const forked = process.cpuUsage(forkStarted);
      forkMicros += forked.user + forked.system;
      for (const line of lines) battleStream._write(line);
      const winner = winnerOf(battle);
      if (winner !== group.winners[number]) {
        process.stderr.write(`group ${index} rollout ${number}: ended with ${winner}, the analysis saw ${group.winners[number]}\n`);
        process.exit(1);
      }
      rollouts += 1;
    });
  });
  const used = process.cpuUsage(started);
  process.stdout.write(JSON.stringify({
    round, rollouts, cpu_s: (used.user + used.system) / 1e6, fork_cpu_s: forkMicros / 1e6,
    wall_s: Number(process.hrtime.bigint() - wall) / 1e9,
  }) + '\n');
}
