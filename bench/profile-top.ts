/**
 * The top items of a V8 CPU profile (`node --cpu-prof`), as a share of all samples: by function (self time) and
 * by package or source folder (self time summed), so "where does a message's CPU go" has a short answer.
 *
 *   npx tsx bench/profile-top.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg> (scoped too), or the repository folder two levels deep, or `(native)` / the V8 pseudo-frame. */
export function area(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return mod[1];
  if (url.startsWith('node:')) return url;
  const repo = /\/(apps\/[^/]+\/src\/[^/]+|packages\/[^/]+\/src\/[^/]+|bench|test\/[^/]+)/.exec(url);
  return repo ? repo[1] : url.replace(/^file:\/\//, '');
}

export function summarise(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  let total = 0;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { callFrame: f } = byId.get(id) as ProfileNode;
    total += us;
    const where = area(f.url, f.functionName);
    const name = `${f.functionName || '(anonymous)'}  ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byArea.set(where, (byArea.get(where) ?? 0) + us);
  }
  const rows = (m: Map<string, number>): string[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [
    `total ${(total / 1000).toFixed(0)} ms sampled`,
    '',
    '# self time by package / folder',
    ...rows(byArea),
    '',
    '# self time by function',
    ...rows(byFunction),
  ];
}

if (process.argv[1]?.endsWith('profile-top.ts')) {
  const [file, top = '25'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/profile-top.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top)).join('\n'));
}
