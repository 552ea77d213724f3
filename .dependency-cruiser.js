// Import rules over apps/ and packages/ (`npm run check:cycles`, part of `npm test`): no cycles between modules, and a
// dependency rule for every folder of a package — each folder names the folders it may import values from; type-only
// imports may cross (they vanish at run time). dependency-cruiser cannot use TypeScript 7 (it has no JavaScript
// compiler API yet), so it parses with swc.

/**
 * The folders of each package, lowest first, with the folders each may import values from. `(root)` is the package's
 * loose files (the barrel `index.ts` and the shared contracts), which nothing inside the package imports except where
 * listed. A new folder must be added here, or the check fails (`unlisted-folder`).
 */
const LAYERS = {
  'packages/agent-core/src': {
    base: [],
    store: ['base'],
    providers: ['base'],
    compression: ['base', 'providers'],
    tools: ['base'],
    loop: ['base', 'providers', 'compression', 'tools'],
    builtins: ['base', 'store', 'providers', 'compression', 'tools', 'loop'],
    trajectory: ['base'],
    '(root)': ['*'],
  },
};

const GATEWAY = '^apps/gateway/src';
/** Folder pairs that once imported each other; each now depends one way only. */
const ONE_WAY_FOLDERS = '(turns|sessions|ops|admin)';

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a folder of a package (its loose files for `(root)`). */
const folderPath = (pkg, folder) => (folder === '(root)' ? `^${escape(pkg)}/[^/]+$` : `^${escape(pkg)}/${escape(folder)}/`);

function layerRules() {
  const rules = [];
  for (const [pkg, folders] of Object.entries(LAYERS)) {
    const names = Object.keys(folders);
    rules.push({
      name: 'unlisted-folder',
      severity: 'error',
      comment: `A folder of ${pkg} that LAYERS in .dependency-cruiser.js does not list: give it its place.`,
      from: { path: `^${escape(pkg)}/`, pathNot: names.map((n) => folderPath(pkg, n)) },
      to: {},
    });
    for (const [folder, allowed] of Object.entries(folders)) {
      if (allowed.includes('*')) continue;
      const forbidden = names.filter((n) => n !== folder && !allowed.includes(n));
      if (forbidden.length === 0) continue;
      rules.push({
        name: `layer:${pkg.split('/')[1]}/${folder}`,
        severity: 'error',
        comment: `${pkg}/${folder} may import values only from ${allowed.join(', ') || 'nothing else in its package'} (LAYERS in .dependency-cruiser.js).`,
        from: { path: folderPath(pkg, folder), pathNot: '\\.test\\.ts$' },
        to: { path: forbidden.map((n) => folderPath(pkg, n)), dependencyTypesNot: ['type-only'] },
      });
    }
  }
  return rules;
}

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
    ...layerRules(),
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
    // swc reports type-only imports too (dependency type "type-only"): the cycle rule counts them on purpose (a cycle
    // through types alone still ties two modules together); the layer rules let them cross. (tsPreCompilationDeps is
    // a tsc-only switch; setting it would only print a warning that tsc is missing.)
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
