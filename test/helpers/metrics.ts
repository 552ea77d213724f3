/** Reading a gateway's Prometheus `/metrics` in end-to-end tests. */
import type { GatewayProcess } from './gateway.js';

/** One sample of the Prometheus text format whose labels include `labels`; null when there is none. */
export async function metric(gw: GatewayProcess, name: string, labels: Record<string, string> = {}): Promise<number | null> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return null;
}
