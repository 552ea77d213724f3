import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configSecrets, loadConfig } from './config/load.js';
import { createLogger, routeConsoleToLogger, secretKeysRedacted } from './logger.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('logger', () => {
  const env = {
    TELEGRAM_BOT_TOKEN: '123456:AAH-secret-telegram-token',
    OPENAI_API_KEY: 'sk-proj-very-secret-key',
    SLACK_BOT_TOKEN: 'xoxb-slack-secret',
    SLACK_SIGNING_SECRET: 'slack-signing-secret',
    HERALD_ADMIN_TOKEN: 'admin-secret-token-123',
  };
  const config = loadConfig({ env, file: null });
  const secrets = Object.values(env);

  it('never writes a secret: not in a logged config, not in an error message that quotes a URL', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream, secrets: configSecrets(config) });
    log.info({ config }, 'config loaded');
    log
      .child({ platform: 'telegram' })
      .error({ err: new Error(`request to https://api.telegram.org/bot${env.TELEGRAM_BOT_TOKEN}/getMe failed`) }, 'poll failed');
    log.info({ headers: { authorization: `Bearer ${env.OPENAI_API_KEY}` } }, 'request');
    const text = out.text();
    expect(text).toContain('config loaded');
    expect(text).toContain('[redacted]');
    for (const s of secrets) expect(text).not.toContain(s);
  });

  it('scrubs a secret the line holds JSON-escaped or percent-encoded, too', () => {
    const token = 'adm"in\\tok+en/with=base64';
    const out = capture();
    const log = createLogger({ destination: out.stream, secrets: [token] });
    log.warn({ given: token }, 'refused');
    log.warn(`GET /admin/queues?token=${encodeURIComponent(token)} failed`);
    const text = out.text();
    expect(text.match(/\[redacted\]/g)).toHaveLength(2);
    for (const form of [token, JSON.stringify(token).slice(1, -1), encodeURIComponent(token)]) expect(text).not.toContain(form);
  });

  it('censors a secret-named key at any depth, in arrays too, and leaves lines without one as they are', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream });
    log.info(
      { a: { b: { c: { token: 'deep-secret-1' } } }, list: [{ apiKey: 'deep-secret-2' }, { password: { nested: 'deep-secret-3' } }], keep: 'visible' },
      'nested',
    );
    log.child({ platform: 'slack', sessionKey: 'k' }).info({ text: 'he said "token": no' }, 'plain');
    const [nested, plain] = out
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(nested).toMatchObject({ a: { b: { c: { token: '[redacted]' } } }, list: [{ apiKey: '[redacted]' }, { password: '[redacted]' }], keep: 'visible' });
    expect(out.text()).not.toMatch(/deep-secret/);
    expect(plain).toMatchObject({ platform: 'slack', sessionKey: 'k', text: 'he said "token": no', msg: 'plain' });
    expect(secretKeysRedacted('{"msg":"no secrets here"}\n')).toBe('{"msg":"no secrets here"}\n');
    // A line that is not one JSON object still loses the string values of secret keys.
    expect(secretKeysRedacted('x {"token":"a\\"b"} {"apiKey":"c"}')).toBe('x {"token":"[redacted]"} {"apiKey":"[redacted]"}');
  });

  it('carries child bindings (platform, session key, job id) on every line', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream });
    log.child({ platform: 'slack', sessionKey: 'agent:main:slack:dm:D1', jobId: 'slack:D1:1.2' }).info('turn started');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ platform: 'slack', sessionKey: 'agent:main:slack:dm:D1', jobId: 'slack:D1:1.2', msg: 'turn started' });
  });
});

describe('routeConsoleToLogger', () => {
  it('turns library console warnings into log lines, once per ten minutes for a repeated one', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream, secrets: ['sk-secret-key-123'] });
    let clock = 0;
    const restore = routeConsoleToLogger(log, () => clock);
    try {
      console.warn("The model '%s' is deprecated", 'claude-x');
      console.warn("The model '%s' is deprecated", 'claude-x');
      console.error('request failed with sk-secret-key-123');
      clock += 11 * 60_000;
      console.warn("The model '%s' is deprecated", 'claude-x');
    } finally {
      restore();
    }
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string; from: string });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, "The model 'claude-x' is deprecated"],
      [50, 'request failed with [redacted]'],
      [40, "The model 'claude-x' is deprecated"],
    ]);
    expect(lines.every((l) => l.from === 'console')).toBe(true);
  });
});
