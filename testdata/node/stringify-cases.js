// stringify-cases.js: reads a JSON array of base64 documents on stdin and
// writes, for each, what JavaScript makes of the document's bytes read as a
// UTF-8 file: {"compact": JSON.stringify(v), "indented":
// JSON.stringify(v, null, 2)} with v = JSON.parse(text), or {"error": msg}
// when JSON.parse throws. The answer is one JSON array; JSON.stringify
// escapes lone surrogates, so it is well-formed UTF-8.
'use strict';
const docs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = docs.map((b64) => {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  try {
    const v = JSON.parse(text);
    return { compact: JSON.stringify(v), indented: JSON.stringify(v, null, 2) };
  } catch (e) {
    return { error: String(e.message) };
  }
});
process.stdout.write(JSON.stringify(out));
