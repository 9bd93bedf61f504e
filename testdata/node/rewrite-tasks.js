// rewrite-tasks.js DIR STOPFILE: until STOPFILE exists, goes over every task
// file in DIR, round after round, and does to each what Claude Code's
// TaskUpdate does: take its lock (proper-lockfile), read the JSON, append
// " [node R]" to the subject and set metadata["node_R"] = true, write the
// file back in place with JSON.stringify(task, null, 2), release. Prints
// "ID R" for every update made.
'use strict';
const fs = require('fs');
const path = require('path');
const lockfile = require('proper-lockfile');

const [dir, stopFile] = process.argv.slice(2);
const options = { retries: { retries: 100000, minTimeout: 1, maxTimeout: 20 } };

(async () => {
  for (let round = 1; !fs.existsSync(stopFile); round++) {
    const files = fs.readdirSync(dir).filter((n) => /^[A-Za-z0-9_-]+\.json$/.test(n));
    for (const name of files) {
      const file = path.join(dir, name);
      const release = await lockfile.lock(file, options);
      try {
        const task = JSON.parse(fs.readFileSync(file, 'utf8'));
        task.subject = `${task.subject} [node ${round}]`;
        task.metadata = task.metadata || {};
        task.metadata[`node_${round}`] = true;
        fs.writeFileSync(file, JSON.stringify(task, null, 2));
      } finally {
        await release();
      }
      process.stdout.write(`${name.slice(0, -5)} ${round}\n`);
    }
  }
})().catch((err) => {
  process.stderr.write(`rewrite-tasks: ${err.stack}\n`);
  process.exit(1);
});
