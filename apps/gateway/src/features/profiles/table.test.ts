import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, loadConfig } from '../../support/config/load.js';
import { ProfileTable, memoryKeyOf, searchProfileOf } from './table.js';

const team = (yaml: Record<string, unknown>, env: Record<string, string> = {}) =>
  loadConfig({
    env: {
      HERALD_MODEL: 'openai:gpt-4.1-mini',
      HERALD_FALLBACK_MODELS: 'anthropic:claude-haiku-4-5',
      HERALD_PROFILES: JSON.stringify(yaml.profiles ?? {}),
      HERALD_ROUTES: JSON.stringify(yaml.routes ?? []),
      ...env,
    },
    file: null,
  });
const configError = (yaml: Record<string, unknown>, env: Record<string, string> = {}): string => {
  try {
    team(yaml, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

const PROFILES = {
  support: {
    model: 'openai:gpt-4.1-nano',
    system_prompt: 'You answer support questions.',
    toolsets: ['core'],
    busy_input_mode: 'queue',
    max_concurrent_turns: 2,
  },
  sales: { system_prompt: 'You sell.', memory: 'shared' },
  ops: {},
};
const ROUTES = [
  { platform: 'slack', chat: 'C-SUPPORT', profile: 'support' },
  { platform: 'telegram', account: 'salesbot', profile: 'sales' },
  { platform: 'discord', space: 'G1', thread: ['T1', 'T2'], profile: 'ops' },
  { user: '42', chat_type: 'dm', profile: 'ops' },
  { platform: 'telegram', chat: '-100', profile: 'support' },
];
const ACCOUNTS = JSON.stringify([{ platform: 'telegram', name: 'salesbot', bot_token: '222:BBB' }]);

describe('agent profiles and routes', () => {
  const table = new ProfileTable(team({ profiles: PROFILES, routes: ROUTES }, { TELEGRAM_BOT_TOKEN: '111:AAA', HERALD_BOT_ACCOUNTS: ACCOUNTS }));
  const route = (m: Parameters<ProfileTable['route']>[0]) => table.route(m).name;

  it('picks a profile by platform, account, chat, space, thread and user; first match wins; the default otherwise', () => {
    expect(route({ platform: 'slack', chatId: 'C-SUPPORT', userId: '7' })).toBe('support');
    expect(route({ platform: 'slack', chatId: 'C-OTHER', userId: '7' })).toBe('default');
    expect(route({ platform: 'telegram', account: 'salesbot', chatId: '-100', userId: '7' })).toBe('sales'); // route 2 before route 5
    expect(route({ platform: 'telegram', chatId: '-100', userId: '7' })).toBe('support'); // the default account
    expect(route({ platform: 'discord', spaceId: 'G1', threadId: 'T2', userId: '7' })).toBe('ops');
    expect(route({ platform: 'discord', spaceId: 'G1', threadId: 'T3', userId: '7' })).toBe('default');
    expect(route({ platform: 'discord', spaceId: 'G2', threadId: 'T1', userId: '7' })).toBe('default');
    expect(route({ platform: 'discord', chatType: 'dm', chatId: 'D', userId: '42' })).toBe('ops');
    expect(route({ platform: 'discord', chatType: 'group', chatId: 'D', userId: '42' })).toBe('default');
  });

  it('fills what a profile leaves out from the top-level settings; a profile with its own model keeps no foreign fallbacks', () => {
    const support = table.get('support');
    expect(support).toMatchObject({
      model: 'openai:gpt-4.1-nano',
      fallbackModels: [],
      toolsets: ['core'],
      busyInputMode: 'queue',
      maxConcurrentTurns: 2,
      memory: 'profile',
    });
    const sales = table.get('sales');
    expect(sales).toMatchObject({
      model: 'openai:gpt-4.1-mini',
      fallbackModels: ['anthropic:claude-haiku-4-5'],
      systemPrompt: 'You sell.',
      busyInputMode: 'interrupt',
    });
    expect(table.get(null).name).toBe('default');
    expect(table.get('removed-since').name).toBe('default');
  });

  it('reads profiles, routes, accounts, prices and budgets from herald.yaml as mappings and lists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-team-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'herald.yaml');
    writeFileSync(
      file,
      [
        'profiles:',
        '  support: { model: "openai:gpt-4.1-nano", toolsets: [core], max_concurrent_turns: 3 }',
        'routes:',
        '  - { platform: slack, chat: [C1, C2], profile: support }',
        'prices:',
        '  my-model: { input: 1, output: 2, cache_read: 0.1 }',
        'budgets:',
        '  - { scope: user, period: day, usd: 2 }',
        'admin_users: [telegram:42]',
        'llm_concurrency: 5',
      ].join('\n'),
    );
    const c = loadConfig({ env: {}, file });
    expect(new ProfileTable(c).route({ platform: 'slack', chatId: 'C2' }).maxConcurrentTurns).toBe(3);
    expect(c.prices['my-model']).toEqual({ input: 1, output: 2, cache_read: 0.1 });
    expect(c.budgets).toEqual([{ scope: 'user', period: 'day', usd: 2 }]);
    expect([c.adminUsers, c.llmConcurrency]).toEqual([['telegram:42'], 5]);
  });

  it('HERALD_DEFAULT_PROFILE answers what no route matches', () => {
    const t = new ProfileTable(team({ profiles: PROFILES, routes: [] }, { HERALD_DEFAULT_PROFILE: 'ops' }));
    expect(t.route({ platform: 'slack', chatId: 'C', userId: '1' }).name).toBe('ops');
  });

  it('keeps notes and past sessions per profile and per person, unless the profile shares the default memory', () => {
    expect(memoryKeyOf(table.get('default'), 'telegram', '1')).toBe('telegram:1');
    expect(memoryKeyOf(table.get('support'), 'telegram', '1')).toBe('profile:support:telegram:1');
    expect(memoryKeyOf(table.get('support'), 'telegram', '2')).not.toBe(memoryKeyOf(table.get('support'), 'telegram', '1'));
    expect(memoryKeyOf(table.get('sales'), 'telegram', '1')).toBe('telegram:1');
    expect(searchProfileOf(table.get('support'))).toBe('support');
    expect(searchProfileOf(table.get('sales'))).toBeUndefined();
  });
});

describe('team settings that stop start-up', () => {
  it('an unknown profile in a route, the default profile, a budget or an MCP server', () => {
    expect(configError({ profiles: PROFILES, routes: [{ platform: 'slack', profile: 'helpdesk' }] })).toBe(
      'HERALD_ROUTES: route 1: unknown profile "helpdesk" (known: default, support, sales, ops)',
    );
    expect(configError({}, { HERALD_DEFAULT_PROFILE: 'nope' })).toMatch(/^HERALD_DEFAULT_PROFILE: unknown profile "nope"/);
    expect(configError({}, { HERALD_BUDGETS: '[{"scope":"profile","period":"day","usd":1,"profile":"x"}]' })).toMatch(
      /^HERALD_BUDGETS: budget 1: unknown profile "x"/,
    );
    expect(configError({}, { HERALD_MCP_SERVERS: '{"files":{"command":"x","profiles":["research"]}}' })).toMatch(
      /^HERALD_MCP_SERVERS: files\.profiles: unknown profile "research"/,
    );
  });

  it('an unknown personality, top-level or in a profile; a personality of HERALD_PERSONALITIES is known', () => {
    expect(configError({}, { HERALD_PERSONALITY: 'jester' })).toMatch(/^HERALD_PERSONALITY: unknown personality "jester" \(known: none, helpful, /);
    expect(configError({ profiles: { a: { personality: 'jester' } } })).toMatch(/^HERALD_PROFILES: a\.personality: unknown personality "jester"/);
    expect(team({}, { HERALD_PERSONALITY: 'jester', HERALD_PERSONALITIES: '{"jester":"You joke."}' }).personality).toBe('jester');
    expect(new ProfileTable(team({ profiles: { a: { personality: 'pirate' } }, routes: [] }, { HERALD_PERSONALITY: 'noir' })).get('a').personality).toBe(
      'pirate',
    );
  });

  it('an unknown toolset, a bad price, a route to an account that does not exist, a reserved name', () => {
    expect(configError({ profiles: { a: { toolsets: ['core', 'shell'] } } })).toMatch(
      /^HERALD_PROFILES: a\.toolsets\.1: must be one of core, research, schedule, code, full/,
    );
    expect(configError({}, { HERALD_PRICES: '{"gpt-4.1":{"input":-1,"output":2}}' })).toMatch(/^HERALD_PRICES: gpt-4\.1\.input: a price may not be negative/);
    expect(configError({}, { HERALD_PRICES: '{"gpt-4.1":{"input":1}}' })).toMatch(/^HERALD_PRICES: gpt-4\.1\.output:/);
    expect(configError({ routes: [{ account: 'ghost', profile: 'default' }] })).toMatch(/^HERALD_ROUTES: route 1: unknown bot account "ghost"/);
    expect(configError({ profiles: { main: {} } })).toMatch(/^HERALD_PROFILES: main: "main" is reserved/);
    expect(configError({ profiles: { a: { colour: 'blue' } } })).toMatch(/^HERALD_PROFILES: /);
    expect(configError({}, { HERALD_BUDGETS: '[{"scope":"user","period":"week","usd":1}]' })).toMatch(/^HERALD_BUDGETS: .*must be day or month/);
    expect(configError({}, { HERALD_BUDGETS: '[{"scope":"user","period":"day"}]' })).toMatch(/set usd, tokens or both/);
  });

  it("an extra bot account without its platform's default bot, and never echoes a token", () => {
    const msg = configError({}, { HERALD_BOT_ACCOUNTS: ACCOUNTS });
    expect(msg).toBe('HERALD_BOT_ACCOUNTS: telegram:salesbot: set TELEGRAM_BOT_TOKEN for the default account first');
    const bad = configError({}, { TELEGRAM_BOT_TOKEN: '111:AAA', HERALD_BOT_ACCOUNTS: '[{"platform":"telegram","name":"x","bot_token":"not-a-token"}]' });
    expect(bad).toMatch(/^HERALD_BOT_ACCOUNTS: .*must look like 123456:ABC/);
    expect(bad).not.toContain('not-a-token');
  });

  it('an extra Slack app takes Socket Mode (app_token) or Events over HTTP at its own path (signing_secret), not neither', () => {
    const slack = { SLACK_BOT_TOKEN: 'xoxb-main', SLACK_SIGNING_SECRET: 'main-secret' };
    const http = team({}, { ...slack, HERALD_BOT_ACCOUNTS: '[{"platform":"slack","name":"sales","bot_token":"xoxb-sales","signing_secret":"sales-secret"}]' });
    expect(http.botAccounts).toEqual([{ platform: 'slack', name: 'sales', bot_token: 'xoxb-sales', signing_secret: 'sales-secret' }]);
    const neither = configError({}, { ...slack, HERALD_BOT_ACCOUNTS: '[{"platform":"slack","name":"ops","bot_token":"xoxb-ops"}]' });
    expect(neither).toMatch(
      /^HERALD_BOT_ACCOUNTS: .*slack:ops: needs app_token \(Socket Mode\) or signing_secret \(Events over HTTP at POST \/slack\/events\/ops\)/,
    );
  });
});
