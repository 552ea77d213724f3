// Refuses an unsupported Node.js in one line, before anything of Herald loads: imported first by the `herald`
// command (bin/herald.js) and by `npm start` (bin/start.js), and run by `npm run build` and scripts/node-env.sh.
// Plain JavaScript with no imports and no newer syntax, so an old Node reaches the message instead of a crash
// deep inside a dependency (undici on Node 20: "Cannot read properties of undefined (reading 'bind')").
//
// NODE_RANGE is the root package.json's engines.node (a test keeps them equal): the versions every dependency's
// own engines field accepts — undici needs >=22.19, watskeburt and dependency-cruiser skip Node 25.

export var NODE_RANGE = '^22.19.0 || ^24.0.0 || >=26.0.0';

/** Whether a Node version (`process.versions.node`, e.g. "24.21.0") is in NODE_RANGE. */
export function supportedNode(version) {
  var parts = String(version).split('.');
  var major = Number(parts[0]);
  var minor = Number(parts[1]);
  return (major === 22 && minor >= 19) || major === 24 || major >= 26;
}

/** The one line an unsupported Node gets. */
export function unsupportedNodeMessage(version) {
  return (
    'Herald needs Node.js ' +
    NODE_RANGE +
    ' (this is ' +
    version +
    '): run `source scripts/node-env.sh` ' +
    'to put Node 24 first on PATH (or install it yourself), then try again.'
  );
}

if (!supportedNode(process.versions.node)) {
  console.error(unsupportedNodeMessage(process.versions.node));
  process.exit(1);
}
