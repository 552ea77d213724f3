// Import-cycle check over apps/ and packages/ (`npm run check:cycles`, part of `npm test`).
// dependency-cruiser cannot use TypeScript 7 (it has no JavaScript compiler API yet), so it parses with swc.

const GATEWAY = '^apps/gateway/src';
/** Folder pairs that once imported each other; each now depends one way only. */
const ONE_WAY_FOLDERS = '(turns|sessions|ops|admin)';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, directly or through others. Move what both need into its own module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'sessions-not-to-turns',
      severity: 'error',
      comment: 'Turns use the session services; the session services never reach back into turns.',
      from: { path: `${GATEWAY}/sessions/` },
      to: { path: `${GATEWAY}/turns/` },
    },
    {
      name: 'ops-not-to-admin',
      severity: 'error',
      comment: 'The admin HTTP surface uses ops (metrics, heartbeats); ops never reaches into admin.',
      from: { path: `${GATEWAY}/ops/` },
      to: { path: `${GATEWAY}/admin/` },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'A folder cycle through turns, sessions, ops or admin, also one that goes through other folders.',
      scope: 'folder',
      from: { path: `${GATEWAY}/${ONE_WAY_FOLDERS}$` },
      to: { circular: true, path: `${GATEWAY}/${ONE_WAY_FOLDERS}$` },
    },
  ],
  options: {
    // swc reports type-only imports too (dependency type "type-only") and the rules above do not exclude them on
    // purpose: a cycle through types alone still ties two modules together. (tsPreCompilationDeps is a tsc-only
    // switch; setting it would only print a warning that tsc is missing.)
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
