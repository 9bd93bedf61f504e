// lock-hold.js FILE: takes Claude Code's lock on FILE (proper-lockfile with
// Claude Code's options), prints "locked", holds it until a line arrives on
// stdin, releases it and prints "released".
'use strict';
const lockfile = require('proper-lockfile');
const readline = require('readline');

const file = process.argv[2];
const claudeOptions = { retries: { retries: 30, minTimeout: 5, maxTimeout: 100 } };

lockfile.lock(file, claudeOptions).then((release) => {
  process.stdout.write('locked\n');
  const rl = readline.createInterface({ input: process.stdin });
  rl.once('line', async () => {
    await release();
    process.stdout.write('released\n');
    process.exit(0);
  });
}).catch((err) => {
  process.stderr.write(`lock-hold: ${err.message}\n`);
  process.exit(1);
});
