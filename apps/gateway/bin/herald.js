#!/usr/bin/env node
// The `herald` command. Herald runs from its TypeScript sources: tsx compiles them as they load, so a fresh
// `npm install` needs no build step. Run `herald help` for the commands.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli/herald.ts');
const code = await run(process.argv.slice(2));
// null: `herald start` is running the gateway, which exits on its own signals.
if (code !== null) process.exitCode = code;
