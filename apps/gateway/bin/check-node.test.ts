/**
 * The Node check that `npm start`, `npm run build`, `herald` and scripts/node-env.sh make before loading anything:
 * it accepts exactly the engines range of package.json (which every dependency's own engines field accepts), and
 * an old Node gets one line that names the range and the way out.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_RANGE, supportedNode, unsupportedNodeMessage } from './check-node.js';

const root = new URL('../../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };

describe('the Node version check', () => {
  it('names the same range as package.json engines', () => {
    expect(NODE_RANGE).toBe(pkg.engines.node);
  });

  it('accepts Node 22.19+, 24 and 26+, and refuses 20, 22.18 and 25', () => {
    for (const v of ['22.19.0', '22.21.1', '24.0.0', '24.21.0', '26.0.0', '27.3.1']) expect(supportedNode(v), v).toBe(true);
    for (const v of ['18.20.4', '20.20.2', '22.12.0', '22.18.9', '23.11.0', '25.2.1']) expect(supportedNode(v), v).toBe(false);
    expect(supportedNode(process.versions.node)).toBe(true);
  });

  it('tells an old Node in one line what it needs and how to get it', () => {
    const message = unsupportedNodeMessage('20.20.2');
    expect(message).not.toContain('\n');
    expect(message).toContain(`Herald needs Node.js ${pkg.engines.node} (this is 20.20.2)`);
    expect(message).toContain('source scripts/node-env.sh');
  });
});
