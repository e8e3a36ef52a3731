// A V8 startup snapshot of the simulator host: Showdown loaded and the random formats' data read, frozen into a
// blob that a simulator process starts from instead of loading it all again.
//
// Why: a simulator process spends most of its first CPU second loading Showdown and building its first random
// team (Showdown reads every data type of a format's mod, the random sets, and compiles it all), and the suite,
// batches, the analysis and the app start hundreds of them. docs/testing.md has the figures.
//
// Built by `wolfeclick/sim/snapshot.py`: node --snapshot-blob BLOB --build-snapshot snapshot.js SHOWDOWN_ROOT HOST
// (Node 20: one script is snapshotted, and its `require` gives Node's built-in modules only, so this file loads
// CommonJS modules itself: resolve, read, wrap in a function, run). Started as node --snapshot-blob BLOB: the
// deserialized process runs `serve` of the same host `bridge.js` runs, bound to the same Showdown. What a process
// started either way plays is the same, byte for byte (tests/test_sim_snapshot.py); only its start costs less.
'use strict';

const fs = require('fs');
const path = require('path');
const v8 = require('v8');

// Node's built-in modules as the snapshot builder's `require` gives them. Some cannot be loaded while a snapshot is
// built (`repl` among them, which Showdown's server-side helpers name at load) and none of these is used by a
// battle: they are lent lazily, loaded on first use (in a running process, where that works).
const LAZY = new Set(['child_process', 'cluster', 'dgram', 'dns', 'http', 'https', 'inspector', 'net', 'readline', 'repl',
  'tls', 'trace_events', 'tty', 'worker_threads']);

function builtin(id) {
  const name = id.startsWith('node:') ? id.slice(5) : id;
  if (!LAZY.has(name)) return require(name);
  let real;
  return new Proxy({}, {
    get(_, key) {
      if (key === '__esModule') return undefined;  // TypeScript's interop asks this at load: not an ES module
      real = real || require(name);
      return real[key];
    },
  });
}

function notFound(id, from) {
  return Object.assign(new Error(`Cannot find module '${id}' from '${from}'`), {code: 'MODULE_NOT_FOUND'});
}

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// Node's resolution, as much of it as Showdown and this host use: relative and absolute paths (as given, .js,
// .json, a folder by its package.json's `main` or its index.js) and packages in node_modules folders up the tree.
function resolve(id, dir) {
  if (id.startsWith('./') || id.startsWith('../') || path.isAbsolute(id)) {
    const found = resolvePath(path.resolve(dir, id));
    if (found) return found;
    throw notFound(id, dir);
  }
  for (let at = dir; ; at = path.dirname(at)) {
    const found = resolvePath(path.join(at, 'node_modules', id));
    if (found) return found;
    if (path.dirname(at) === at) throw notFound(id, dir);
  }
}

function resolvePath(base) {
  for (const file of [base, `${base}.js`, `${base}.json`]) {
    if (isFile(file)) return file;
  }
  const manifest = path.join(base, 'package.json');
  if (isFile(manifest)) {
    const main = JSON.parse(fs.readFileSync(manifest, 'utf8')).main;
    if (main) return resolvePath(path.resolve(base, main));
  }
  const index = path.join(base, 'index.js');
  return isFile(index) ? index : null;
}

const loaded = new Map();

function load(file) {
  const known = loaded.get(file);
  if (known) return known.exports;
  const module = {exports: {}, filename: file, id: file, loaded: false, children: []};
  loaded.set(file, module);
  if (file.endsWith('.json')) {
    module.exports = JSON.parse(fs.readFileSync(file, 'utf8'));
  } else {
    const dir = path.dirname(file);
    const local = (id) => (isBuiltin(id) ? builtin(id) : load(resolve(id, dir)));
    local.resolve = (id) => resolve(id, dir);
    local.cache = {};
    const body = fs.readFileSync(file, 'utf8').replace(/^#!.*/, '');
    // eslint-disable-next-line no-new-func
    const run = new Function('exports', 'require', 'module', '__filename', '__dirname', body);
    run.call(module.exports, module.exports, local, module, file, dir);
  }
  module.loaded = true;
  return module.exports;
}

// Node's built-in modules by name (the snapshot builder's `module` is not one it supports).
const BUILTINS = new Set(['assert', 'async_hooks', 'buffer', 'child_process', 'cluster', 'console', 'constants',
  'crypto', 'dgram', 'diagnostics_channel', 'dns', 'events', 'fs', 'fs/promises', 'http', 'http2', 'https',
  'inspector', 'module', 'net', 'os', 'path', 'perf_hooks', 'process', 'punycode', 'querystring', 'readline', 'repl',
  'stream', 'string_decoder', 'timers', 'tls', 'trace_events', 'tty', 'url', 'util', 'v8', 'vm', 'worker_threads',
  'zlib']);

function isBuiltin(id) {
  return id.startsWith('node:') || BUILTINS.has(id);
}

const [showdownRoot, hostFile] = process.argv.slice(-2);
const showdown = load(resolve(path.resolve(showdownRoot), '/'));
const host = load(hostFile);
host.bind({
  ...showdown,
  State: load(resolve('./dist/sim/state', showdownRoot)).State,
  PRNG: load(resolve('./dist/sim/prng', showdownRoot)).PRNG,
  version: load(path.join(showdownRoot, 'package.json')).version,
}, {kind: 'snapshot', compileCache: () => ({read: 0, compiled: 0})});
// What a first battle would load anyway: each random format's data and sets (a team generated from a fixed seed;
// the generator keeps no state between teams, so later teams are what they would have been).
for (const format of ['gen9randombattle', 'gen4randombattle']) {
  showdown.Teams.generate(format, {seed: [1, 2, 3, 4]});
}

// Learnsets are read with the rest of a format's data but used by the team validator only (team formats and
// `validate-team`), never by a random battle; they are 12 of the blob's 32 MB and about 0.06 CPU s of every start
// (docs/testing.md). Each loaded dex gets them back on first read, built from the files as Showdown's `loadData`
// builds them (a mod's own entries over its parent's: `null` removes one, `inherit` merges one). Checked here first:
// where what comes back is not what Showdown built, the learnsets stay in the snapshot.
function freshModule(file) {
  loaded.delete(file);
  try {
    return load(file);
  } finally {
    loaded.delete(file);
  }
}

function ownLearnsets(dex) {
  let file;
  try {
    file = resolve('./learnsets', dex.dataDir);
  } catch (err) {
    if (err.code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
  return freshModule(file).Learnsets;
}

function buildLearnsets(dex) {
  const own = ownLearnsets(dex);
  if (!dex.parentMod) return own;
  const parent = showdown.Dex.dexes[dex.parentMod].data.Learnsets;
  if (!own) return parent;
  for (const id in parent) {
    if (own[id] === null) {
      delete own[id];
    } else if (!(id in own)) {
      own[id] = parent[id];
    } else if (own[id]?.inherit) {
      delete own[id].inherit;
      own[id] = {...parent[id], ...own[id]};
    }
  }
  return own;
}

function learnsetsOnFirstRead() {
  const warmed = Object.values(showdown.Dex.dexes).filter((dex) => dex.dataCache);
  if (warmed.some((dex) => dex.dataCache.Scripts.init)) return;  // a mod's `init` may change them: keep them
  const built = new Map();
  const lazy = (dex) => {
    if (!built.has(dex)) built.set(dex, buildLearnsets(dex));
    return built.get(dex);
  };
  const swapped = warmed.map((dex) => {
    const eager = dex.dataCache;
    const data = {};
    for (const key of Object.keys(eager)) {
      if (key !== 'Learnsets') data[key] = eager[key];
    }
    Object.defineProperty(data, 'Learnsets', {enumerable: true, get: () => lazy(dex)});
    return {dex, eager, data};
  });
  for (const {dex, data} of swapped) dex.dataCache = data;
  const same = swapped.every(({dex, eager}) => JSON.stringify(lazy(dex)) === JSON.stringify(eager.Learnsets));
  if (!same) {
    for (const {dex, eager} of swapped) dex.dataCache = eager;
    return;
  }
  built.clear();
  for (const file of [...loaded.keys()]) {
    if (path.basename(file) === 'learnsets.js') loaded.delete(file);
  }
}
learnsetsOnFirstRead();

v8.startupSnapshot.setDeserializeMainFunction(() => host.serve());
