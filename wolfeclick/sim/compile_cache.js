// V8's compiled code for the simulator's modules, kept on disk between simulator processes.
//
// Why: every simulator process compiles Pokémon Showdown's JavaScript (the dex data and the battle engine) before
// its first battle. `benchmarks.sim_start` (docs/benchmarks.md) measured a fresh process's CPU from spawn to the end
// of one seeded battle on the 2-core dev machine (Node 20, quiet): 0.66 s without this cache and 0.52 s with it in
// gen9, 0.77 and 0.62 s in gen4, a fifth less. Batches, the analysis, the app's battles and the test suite (about
// 550 simulator processes a run) start simulators often. Node 22 has `module.enableCompileCache()`; Node 20, which this
// project supports, does not, so this does the same with `vm.Script`'s `cachedData`.
//
// Safe by construction: a cache entry is named by the file's path and the SHA-1 of its source, in a folder per Node
// version and architecture, and V8 itself checks an entry against the source and its own flags and rejects one that
// does not fit (then the module is compiled as usual and the entry rewritten). The cache changes only how fast a
// module compiles, never what it does. Any failure to read or write it (a read-only folder, a full disk) is ignored.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const Module = require('module');
const path = require('path');
const vm = require('vm');

const counts = {read: 0, compiled: 0};

// Compile the modules under `root` (a folder) through the cache in `folder`. The entries are written once, when
// the process exits normally (by then the functions it ran are compiled too, so the entry holds them), by
// whichever process first finds an entry missing or rejected; written to a temporary name and renamed into place,
// so processes starting side by side never read half an entry.
function enable(root, folder) {
  const dir = path.join(folder, `${process.version}-${process.arch}`);
  const prefix = path.resolve(root) + path.sep;
  const pending = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function cachedCompile(content, filename) {
    if (!filename.startsWith(prefix)) return compile.call(this, content, filename);
    const digest = crypto.createHash('sha1').update(filename).update('\0').update(content).digest('hex');
    const entry = path.join(dir, `${digest}.bin`);
    let cachedData;
    try { cachedData = fs.readFileSync(entry); } catch { cachedData = undefined; }
    const script = new vm.Script(Module.wrap(content), {filename, cachedData});
    if (cachedData === undefined || script.cachedDataRejected) {
      pending.push([entry, script]);
      counts.compiled += 1;
    } else {
      counts.read += 1;
    }
    const wrapper = script.runInThisContext({displayErrors: true});
    const module = this;
    const require = (id) => module.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, module, false, options);
    require.main = process.mainModule;
    require.cache = Module._cache;
    require.extensions = Module._extensions;
    return wrapper.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
  };
  process.once('exit', () => {
    if (pending.length === 0) return;
    try {
      fs.mkdirSync(dir, {recursive: true});
      for (const [entry, script] of pending) {
        const temporary = `${entry}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, entry);
      }
    } catch {
      // best effort: the next process compiles as usual
    }
  });
}

// How many modules so far came from the cache and how many were compiled afresh (the `hello` answer reports it).
function stats() {
  return {...counts};
}

module.exports = {enable, stats};
