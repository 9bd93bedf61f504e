// stringify.js: reads JSON on stdin, writes JSON.stringify(value, null, 2).
'use strict';
const input = require('fs').readFileSync(0, 'utf8');
process.stdout.write(JSON.stringify(JSON.parse(input), null, 2));
