import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configSecrets, loadConfig } from './load.js';
import { yamlPath } from './settings.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const yamlFile = (text: string): string => {
  const f = join(dir, `herald-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(f, text);
  return f;
};
const load = (env: Record<string, string>, file?: string) => loadConfig({ env, file: file ?? null });
const loadErr = (env: Record<string, string>, file?: string): string => {
  try {
    load(env, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('reads the media settings: limits with defaults, vision overrides as a map, speech-to-text only on OpenAI', () => {
    const c = load({ HERALD_VISION_OVERRIDES: 'llava=true, gpt-4o=no', HERALD_STT_MODEL: 'openai:gpt-4o-mini-transcribe' });
    expect(c.visionOverrides).toEqual({ llava: true, 'gpt-4o': false });
    expect(c.sttModel).toBe('openai:gpt-4o-mini-transcribe');
    expect([c.mediaMaxFileBytes, c.mediaMaxMessageBytes, c.mediaMaxImageBytes, c.mediaMaxImages, c.mediaMaxPages, c.mediaMaxChars]).toEqual([
      20_000_000, 50_000_000, 5_000_000, 10, 50, 40_000,
    ]);
    expect(loadErr({ HERALD_STT_MODEL: 'anthropic:claude-haiku-4-5' })).toMatch(/^HERALD_STT_MODEL: speech-to-text runs on the OpenAI audio API/);
    expect(loadErr({ HERALD_VISION_OVERRIDES: 'llava' })).toMatch(/^HERALD_VISION_OVERRIDES: each entry must be model=true or model=false/);
    expect(loadErr({ HERALD_MEDIA_MAX_PAGES: '0' })).toMatch(/^HERALD_MEDIA_MAX_PAGES: must be at least 1/);
  });

  it('reads the compression threshold as a share of the window, between 0.1 and 0.8', () => {
    expect(load({}).compressionThreshold).toBe(0.5);
    expect(load({ HERALD_COMPRESSION_THRESHOLD: '0.35' }).compressionThreshold).toBe(0.35);
    expect(load({ HERALD_COMPRESSION_THRESHOLD: '.7' }).compressionThreshold).toBe(0.7);
    expect(loadErr({ HERALD_COMPRESSION_THRESHOLD: '0.9' })).toMatch(/^HERALD_COMPRESSION_THRESHOLD: must be at most 0.8 \(got "0.9"\)/);
    expect(loadErr({ HERALD_COMPRESSION_THRESHOLD: '50%' })).toMatch(/^HERALD_COMPRESSION_THRESHOLD: must be a number such as 0.5/);
  });

  it('gives the documented defaults with nothing set, every platform disabled with its reason', () => {
    const c = loadConfig({ env: {}, file: null });
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.db).toBe('./data/herald.db');
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8080);
    expect(c.busyInputMode).toBe('interrupt');
    expect(c.workerConcurrency).toBe(50);
    expect(c.maxIterations).toBe(90);
    expect(c.adminToken).toBeUndefined();
    expect(c.telegram.apiRoot).toBe('https://api.telegram.org');
    expect(c.discord.apiUrl).toBe('https://discord.com/api');
    expect(c.slack.apiUrl).toBe('https://slack.com/api/');
    expect(c.telegram.requireMention).toBe(true);
    expect(c.gateway.allowAllUsers).toBe(false);
    expect(c.platforms.telegram).toEqual({ enabled: false, reason: 'TELEGRAM_BOT_TOKEN is not set' });
    expect(c.platforms.discord.enabled).toBe(false);
    expect(c.platforms.slack.enabled).toBe(false);
  });

  it('parses lists, booleans and numbers from the environment', () => {
    const c = load({
      TELEGRAM_ALLOWED_USERS: '42, 43,,44',
      DISCORD_AUTO_THREAD: 'false',
      HERALD_WORKER_CONCURRENCY: '7',
      HERALD_FALLBACK_MODELS: 'anthropic:claude-sonnet-4-5,openai:gpt-4.1-mini',
    });
    expect(c.telegram.allowedUsers).toEqual(['42', '43', '44']);
    expect(c.discord.autoThread).toBe(false);
    expect(c.workerConcurrency).toBe(7);
    expect(c.fallbackModels).toEqual(['anthropic:claude-sonnet-4-5', 'openai:gpt-4.1-mini']);
  });

  it('reads herald.yaml and lets the environment win', () => {
    const f = yamlFile('port: 9999\nbusy_input_mode: queue\ntelegram:\n  bot_token: "123:abc"\n  allowed_users: [1, 2]\n');
    const fromFile = load({}, f);
    expect(fromFile.port).toBe(9999);
    expect(fromFile.busyInputMode).toBe('queue');
    expect(fromFile.telegram.allowedUsers).toEqual(['1', '2']);
    expect(fromFile.platforms.telegram).toEqual({ enabled: true, reason: 'long polling' });
    const envWins = load({ HERALD_PORT: '7000', HERALD_BUSY_INPUT_MODE: 'steer' }, f);
    expect(envWins.port).toBe(7000);
    expect(envWins.busyInputMode).toBe('steer');
  });

  it('names the variable and the problem in one line for a bad value', () => {
    expect(loadErr({ HERALD_PORT: 'eighty' })).toBe('HERALD_PORT: must be a whole number (got "eighty")');
    expect(loadErr({ HERALD_PORT: '70000' })).toMatch(/^HERALD_PORT: must be at most 65535/);
    expect(loadErr({ HERALD_BUSY_INPUT_MODE: 'yell' })).toMatch(/^HERALD_BUSY_INPUT_MODE: .*interrupt.*queue.*steer/);
    expect(loadErr({ HERALD_MODEL: 'gpt-4' })).toMatch(/^HERALD_MODEL: must look like provider:model/);
    expect(loadErr({ REDIS_URL: 'localhost' })).toMatch(/^REDIS_URL: must be a URL/);
    expect(loadErr({ TELEGRAM_REQUIRE_MENTION: 'maybe' })).toMatch(/^TELEGRAM_REQUIRE_MENTION: /);
    for (const msg of [loadErr({ HERALD_PORT: 'x' }), loadErr({ HERALD_MODEL: 'x' })]) expect(msg).not.toContain('\n');
  });

  it('never echoes a secret in a config error', () => {
    const msg = loadErr({ TELEGRAM_BOT_TOKEN: 'not-a-valid-token-SECRET' });
    expect(msg).toMatch(/^TELEGRAM_BOT_TOKEN: must look like 123456:ABC-DEF/);
    expect(msg).not.toContain('SECRET');
  });

  it('names the YAML key for a bad value in the file, and rejects unknown keys', () => {
    expect(loadErr({}, yamlFile('worker_concurrency: none\n'))).toMatch(/herald-.*\.yaml: worker_concurrency: must be a whole number/);
    expect(loadErr({}, yamlFile('telegram:\n  requre_mention: true\n'))).toMatch(/unknown setting telegram\.requre_mention/);
    expect(loadErr({}, yamlFile('[1, 2]\n'))).toMatch(/must be a mapping/);
    expect(loadErr({}, yamlFile('a: [\n'))).toMatch(/not valid YAML/);
  });

  it('requires a webhook secret with a webhook URL', () => {
    expect(loadErr({ TELEGRAM_BOT_TOKEN: '1:a', TELEGRAM_WEBHOOK_URL: 'https://bot.example.com/telegram' })).toMatch(/^TELEGRAM_WEBHOOK_SECRET: must be set/);
  });

  it('refuses a replica WAIT longer than the Slack acknowledgement budget allows, when Slack is configured', () => {
    const slack = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', HERALD_REDIS_WAIT_REPLICAS: '1' };
    expect(loadErr({ ...slack, HERALD_REDIS_WAIT_TIMEOUT_MS: '2500' })).toMatch(/^HERALD_REDIS_WAIT_TIMEOUT_MS: must be at most 2000 with Slack configured/);
    expect(load({ ...slack, HERALD_REDIS_WAIT_TIMEOUT_MS: '2000' }).redisWaitTimeoutMs).toBe(2000);
    // No WAIT, or no Slack: any timeout.
    expect(load({ ...slack, HERALD_REDIS_WAIT_REPLICAS: '0', HERALD_REDIS_WAIT_TIMEOUT_MS: '5000' }).redisWaitTimeoutMs).toBe(5000);
    expect(load({ HERALD_REDIS_WAIT_REPLICAS: '1', HERALD_REDIS_WAIT_TIMEOUT_MS: '5000' }).redisWaitTimeoutMs).toBe(5000);
  });

  it('picks the Slack transport from which credentials are present', () => {
    expect(load({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }).platforms.slack.reason).toBe('Socket Mode');
    expect(load({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' }).platforms.slack.reason).toMatch(/Events over HTTP/);
    expect(load({ SLACK_BOT_TOKEN: 'xoxb-1' }).platforms.slack.enabled).toBe(false);
  });

  it('collects every secret value for the log scrubber', () => {
    const c = load({ TELEGRAM_BOT_TOKEN: '1:tok', OPENAI_API_KEY: 'sk-x', HERALD_ADMIN_TOKEN: 'admin-token-0123456789' });
    expect(configSecrets(c).sort()).toEqual(['1:tok', 'admin-token-0123456789', 'sk-x']);
  });

  it('reads HERALD_API_KEYS as a list of keys, each scrubbed from logs; a short key stops start-up without showing it', () => {
    const c = load({ HERALD_API_KEYS: 'sk-first-key-000000001, sk-second-key-00000002' });
    expect(c.apiKeys).toEqual(['sk-first-key-000000001', 'sk-second-key-00000002']);
    expect(c.apiRateLimit).toBe(60);
    expect(configSecrets(c).sort()).toEqual(['sk-first-key-000000001', 'sk-second-key-00000002']);
    expect(load({}).apiKeys).toEqual([]);
    const err = loadErr({ HERALD_API_KEYS: 'sk-first-key-000000001,short' });
    expect(err).toBe('HERALD_API_KEYS: each key must be at least 16 characters (got (hidden))');
    expect(loadErr({ HERALD_API_RATE_LIMIT: 'lots' })).toMatch(/^HERALD_API_RATE_LIMIT: must be a whole number/);
  });

  it('gathers key pools from numbered variables, lists and endpoints, and scrubs every key', () => {
    const c = load({
      OPENAI_API_KEY: 'sk-a',
      OPENAI_API_KEY_3: 'sk-c',
      OPENAI_API_KEY_2: 'sk-b',
      OPENAI_API_KEYS: 'sk-d,sk-a',
      HERALD_ENDPOINTS: '[{"name":"openrouter","base_url":"https://openrouter.ai/api/v1","api_keys":["or-2"]}]',
      OPENROUTER_API_KEY: 'or-1',
    });
    expect(c.keyPools).toEqual({ openai: ['sk-a', 'sk-d', 'sk-b', 'sk-c'], anthropic: [], openrouter: ['or-1', 'or-2'] });
    expect(configSecrets(c)).toEqual(expect.arrayContaining(['sk-a', 'sk-b', 'sk-c', 'sk-d', 'or-1', 'or-2']));
  });

  it.each([
    ['HERALD_ENDPOINTS', 'not json', /HERALD_ENDPOINTS: must be a JSON list of endpoints/],
    ['HERALD_ENDPOINTS', '[{"name":"openai","base_url":"http://x"}]', /HERALD_ENDPOINTS: an endpoint may not take a built-in provider name/],
    ['HERALD_MODEL_API_MODES', 'openai:gpt-5=turbo', /HERALD_MODEL_API_MODES: must look like provider:model=mode/],
    ['HERALD_KEY_STRATEGY', 'random', /HERALD_KEY_STRATEGY/],
    ['HERALD_MODEL', 'Open AI:gpt', /HERALD_MODEL: must look like provider:model/],
  ])('%s=%j stops start-up with one line naming it', (name, value, message) => {
    expect(() => load({ [name]: value })).toThrow(message);
  });
});

describe('yamlPath', () => {
  it('derives the YAML key from the environment name', () => {
    expect(yamlPath('HERALD_BUSY_INPUT_MODE')).toEqual(['busy_input_mode']);
    expect(yamlPath('TELEGRAM_REQUIRE_MENTION')).toEqual(['telegram', 'require_mention']);
    expect(yamlPath('GATEWAY_ALLOWED_USERS')).toEqual(['gateway', 'allowed_users']);
    expect(yamlPath('REDIS_URL')).toEqual(['redis_url']);
  });
});

it('says so when the named herald.yaml cannot be read', () => {
  expect(() => loadConfig({ env: {}, file: join(dir, 'absent.yaml') })).toThrow(/absent\.yaml: cannot be read \(ENOENT\)/);
});

describe('mcp_servers', () => {
  it('reads stdio and HTTP servers from herald.yaml with their defaults', () => {
    const f = yamlFile(
      [
        'mcp_servers:',
        '  files:',
        '    command: mcp-files',
        '    args: [/srv/docs]',
        '    deny: [write_file]',
        '  search:',
        '    url: https://mcp.example.com/mcp',
        '    headers: { Authorization: "Bearer ${SEARCH_TOKEN}" }',
        '    allow: ["web_*"]',
        '    timeout_ms: 20000',
        '    profiles: [default]',
      ].join('\n'),
    );
    const c = load({ SEARCH_TOKEN: 'tok-0123456789' }, f);
    expect(c.mcpServers).toEqual([
      {
        name: 'files',
        command: 'mcp-files',
        args: ['/srv/docs'],
        env: {},
        headers: {},
        deny: ['write_file'],
        timeout_ms: 60_000,
        profiles: ['default'],
        enabled: true,
      },
      {
        name: 'search',
        url: 'https://mcp.example.com/mcp',
        args: [],
        env: {},
        headers: { Authorization: 'Bearer tok-0123456789' },
        allow: ['web_*'],
        deny: [],
        timeout_ms: 20_000,
        profiles: ['default'],
        enabled: true,
      },
    ]);
    // The filled-in header is a secret for the log scrubber, whole and as the bare token.
    expect(configSecrets(c)).toEqual(expect.arrayContaining(['Bearer tok-0123456789', 'tok-0123456789']));
  });

  it('takes JSON from HERALD_MCP_SERVERS', () => {
    const c = load({ HERALD_MCP_SERVERS: '{"git":{"command":"mcp-git","env":{"GIT_DIR":"/repo"}}}' });
    expect(c.mcpServers?.map((s) => [s.name, s.command, s.env])).toEqual([['git', 'mcp-git', { GIT_DIR: '/repo' }]]);
    expect(load({}).mcpServers).toBeUndefined();
  });

  it('names the server and field of a bad entry in one line, without echoing the value', () => {
    const bad = (servers: unknown): string => loadErr({ HERALD_MCP_SERVERS: JSON.stringify(servers) });
    expect(bad({ files: { command: 'x', timeout_ms: 5 } })).toBe('HERALD_MCP_SERVERS: files.timeout_ms: must be at least 100 (got (hidden))');
    expect(bad({ files: {} })).toMatch(/^HERALD_MCP_SERVERS: files\.command: set command \(a stdio server\) or url/);
    expect(bad({ files: { command: 'x', url: 'http://a' } })).toMatch(/^HERALD_MCP_SERVERS: files\.url: set either command or url, not both/);
    expect(bad({ web: { url: 'ftp://a' } })).toMatch(/^HERALD_MCP_SERVERS: web\.url: must be an http/);
    expect(bad({ web: { url: 'http://a', args: ['x'] } })).toMatch(/web\.url: args, env and cwd belong to a command/);
    expect(bad({ files: { command: 'x', headers: { A: 'b' } } })).toMatch(/files\.headers: headers belong to a url/);
    expect(bad({ files: { command: 'x', profiles: ['research'] } })).toMatch(/files\.profiles: unknown profile "research" \(known: default\)/);
    expect(bad({ files: { command: 'x', profiles: [] } })).toMatch(/files\.profiles: name at least one profile/);
    expect(bad({ files: { command: 'x', colour: 'red' } })).toMatch(/^HERALD_MCP_SERVERS: files: .*colour/);
    expect(bad({ my__files: { command: 'x' } })).toMatch(/^HERALD_MCP_SERVERS: my__files: a server name is letters, digits, - and single _/);
    expect(loadErr({ HERALD_MCP_SERVERS: '{not json' })).toMatch(/^HERALD_MCP_SERVERS: must be a JSON object of servers by name/);
    expect(bad({ web: { url: 'https://a/mcp', headers: { Authorization: 'Bearer ${MISSING_TOKEN}' } } })).toBe(
      'HERALD_MCP_SERVERS: web.headers.Authorization: ${MISSING_TOKEN} is not set in the environment',
    );
  });
});
