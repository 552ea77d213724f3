import { readFileSync } from 'node:fs';

/** The version in the root package.json, read once. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
