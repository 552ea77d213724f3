// Import rules over apps/ and packages/ (`npm run check:cycles`, part of `npm test`; docs/architecture.md, "Folders"): no cycles between modules, and a
// dependency rule for every folder of a package — each folder names the folders it may import values from; type-only
// imports may cross (they vanish at run time). dependency-cruiser cannot use TypeScript 7 (it has no JavaScript
// compiler API yet), so it parses with swc.

/**
 * The folders of each package, lowest first, with the folders each may import values from. `(root)` is the package's
 * loose files (the barrel `index.ts` and the shared contracts), which nothing inside the package imports except where
 * listed. A new folder must be added here, or the check fails (`unlisted-folder`).
 */
const FEATURES = [
  'features/approvals',
  'features/budgets',
  'features/interactions',
  'features/llm',
  'features/mcp',
  'features/media',
  'features/pairing',
  'features/profiles',
  'features/prompt',
  'features/sandbox',
  'features/schedules',
  'features/sessions',
  'features/skills',
];
const EDGES = ['edges/api', 'edges/console', 'edges/ingress', 'edges/commands', 'edges/admin'];
const SUPPORT = ['support/', 'support/config', 'support/ops', 'support/limits'];

const LAYERS = {
  // The service, top to bottom: the composition roots and the CLI; the edges a message comes in by (platforms,
  // the OpenAI-compatible API, admin HTTP and the console, the commands that bypass the queue); the queue; the
  // turn; what goes out to the platforms; the features the turn and the edges use; support beneath everything.
  'apps/gateway/src': {
    '(root)': ['*'],
    roles: [...EDGES, 'turn', 'out', 'queue', ...FEATURES, ...SUPPORT],
    cli: ['(root)', ...EDGES, 'turn', 'out', 'queue', ...FEATURES, ...SUPPORT],
    'edges/api': ['edges/admin', 'edges/ingress', 'turn', 'queue', ...FEATURES, ...SUPPORT],
    'edges/console': ['edges/admin', ...FEATURES, ...SUPPORT],
    'edges/ingress': ['edges/commands', 'turn', 'queue', ...FEATURES, ...SUPPORT],
    'edges/commands': ['turn', 'queue', ...FEATURES, ...SUPPORT],
    'edges/admin': ['queue', ...FEATURES, ...SUPPORT],
    turn: ['out', 'queue', ...FEATURES, ...SUPPORT],
    out: ['queue', ...FEATURES, ...SUPPORT],
    queue: [...FEATURES, ...SUPPORT],
    'features/sessions': [
      'features/budgets',
      'features/llm',
      'features/pairing',
      'features/profiles',
      'features/prompt',
      'features/schedules',
      'features/skills',
      ...SUPPORT,
    ],
    'features/mcp': ['features/media', ...SUPPORT],
    'features/approvals': ['features/interactions', ...SUPPORT],
    'features/budgets': SUPPORT,
    'features/interactions': SUPPORT,
    'features/llm': SUPPORT,
    'features/media': SUPPORT,
    'features/pairing': SUPPORT,
    'features/profiles': SUPPORT,
    // The prompt builder reads the skills index (features/skills) into the system prompt.
    'features/prompt': ['features/skills', ...SUPPORT],
    'features/sandbox': SUPPORT,
    'features/schedules': SUPPORT,
    'features/skills': SUPPORT,
    'support/ops': ['support/', 'support/config'],
    'support/': ['support/config'],
    'support/config': [],
    'support/limits': [],
  },
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
  'packages/adapters/src': {
    '(root)': ['*'],
    shared: ['(root)'],
    telegram: ['shared', '(root)'],
    discord: ['shared', '(root)'],
    slack: ['shared', '(root)'],
    whatsapp: ['shared', '(root)'],
    matrix: ['shared', '(root)'],
  },
};

const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a folder of a package (its loose files for `(root)`). */
const folderPath = (pkg, folder) => {
  if (folder === '(root)') return `^${escapeRegex(pkg)}/[^/]+$`;
  // 'support/': the loose files of support/ (its subfolders are folders of their own).
  if (folder.endsWith('/')) return `^${escapeRegex(pkg)}/${escapeRegex(folder)}[^/]+$`;
  return `^${escapeRegex(pkg)}/${escapeRegex(folder)}/`;
};

function layerRules() {
  const rules = [];
  for (const [pkg, folders] of Object.entries(LAYERS)) {
    const names = Object.keys(folders);
    rules.push({
      name: 'unlisted-folder',
      severity: 'error',
      comment: `A folder of ${pkg} that LAYERS in .dependency-cruiser.js does not list: give it its place.`,
      from: { path: `^${escapeRegex(pkg)}/`, pathNot: names.map((n) => folderPath(pkg, n)) },
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
