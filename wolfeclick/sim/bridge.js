// WolfeClick simulator host, plain start: Showdown required through the compile cache, then the host
// (`bridge_host.js`; the protocol is PROTOCOL.md beside this file). `snapshot.js` starts the same host from a V8
// startup snapshot instead (`wolfeclick/sim/process.py` picks).
'use strict';

const path = require('path');

const showdownRoot = process.env.WOLFECLICK_SHOWDOWN || path.join(__dirname, '..', '..', 'node_modules', 'pokemon-showdown');
// Compiled code kept between processes (compile_cache.js): a fifth less CPU to a simulator's first battle's end.
const compileCache = require('./compile_cache');
if (process.env.WOLFECLICK_COMPILE_CACHE) compileCache.enable(showdownRoot, process.env.WOLFECLICK_COMPILE_CACHE);
const host = require('./bridge_host');
host.bind({
  ...require(showdownRoot),
  State: require(path.join(showdownRoot, 'dist', 'sim', 'state')).State,
  PRNG: require(path.join(showdownRoot, 'dist', 'sim', 'prng')).PRNG,
  version: require(path.join(showdownRoot, 'package.json')).version,
}, {kind: 'plain', compileCache: compileCache.stats});
host.serve();
