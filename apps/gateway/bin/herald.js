#!/usr/bin/env node
// The `herald` command. In production (NODE_ENV=production, as in the Docker image, or wherever tsx is not
// installed) it runs the compiled JavaScript from dist/ (`npm run build`); in a development checkout it compiles
// the TypeScript sources as they load (tsx), so an edit never runs against a stale build. `herald help` lists the
// commands. An unsupported Node is refused in one line first (check-node.js), before anything else loads.
import './check-node.js';
import { register } from 'node:module';

async function loadRun() {
  if (process.env.NODE_ENV !== 'production') {
    try {
      const { register: registerTsx } = await import('tsx/esm/api');
      registerTsx();
      return (await import('../src/cli/herald.ts')).run;
    } catch (err) {
      if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    }
  }
  // Workspace packages export dist/ under the `@herald/dist` condition (src/ otherwise): add it for this process.
  const hook = "export async function resolve(s, c, next) { return next(s, { ...c, conditions: [...c.conditions, '@herald/dist'] }); }";
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  return (await import('../dist/cli/herald.js')).run;
}

const run = await loadRun();
const code = await run(process.argv.slice(2));
// null: `herald start` is running the gateway, which exits on its own signals.
if (code !== null) process.exitCode = code;
