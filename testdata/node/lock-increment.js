// lock-increment.js FILE KEY N: N times, does what Claude Code's TaskUpdate
// does to FILE: take its lock (proper-lockfile), read the JSON, increment
// metadata[KEY], write the file back with JSON.stringify(task, null, 2) in
// place, release. Lock waits retry for as long as it takes.
'use strict';
const fs = require('fs');
const lockfile = require('proper-lockfile');

const [file, key, countArg] = process.argv.slice(2);
const count = Number(countArg);
const options = { retries: { retries: 100000, minTimeout: 1, maxTimeout: 20 } };

(async () => {
  for (let i = 0; i < count; i++) {
    const release = await lockfile.lock(file, options);
    try {
      const task = JSON.parse(fs.readFileSync(file, 'utf8'));
      task.metadata = task.metadata || {};
      task.metadata[key] = (task.metadata[key] || 0) + 1;
      fs.writeFileSync(file, JSON.stringify(task, null, 2));
    } finally {
      await release();
    }
  }
})().catch((err) => {
  process.stderr.write(`lock-increment: ${err.stack}\n`);
  process.exit(1);
});
