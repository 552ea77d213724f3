/**
 * The operator console in a real browser: Playwright (playwright-core) driving Debian's Chromium against the real
 * gateway process, with the Telegram and OpenAI stand-ins behind it. The operator logs in with the keyboard,
 * approves a pairing request with the code a stranger got in Telegram (who is then answered), searches the
 * transcripts and opens one with its tool call folded, reads usage, and uses it all at a phone's width. Sessions of
 * the same minute read differently (first message, user name; an API session by its name), a model without a price
 * reads "price unknown", the overview says the API is on, and an unknown console URL is an HTML 404.
 * Screenshots go to a temp directory, or to docs/console/ with HERALD_UPDATE_SCREENSHOTS=1 (docs/console.md shows those).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../packages/agent-core/src/store/index.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { waitFor } from './helpers/ports.js';

const TOKEN = 'console-admin-token-0123456789';
const API_KEY = 'console-api-key-0123456789';
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const OWNER = 500;
const STRANGER = 501;
const DAY = 86_400_000;
const UPDATE_SHOTS = process.env.HERALD_UPDATE_SCREENSHOTS === '1';
const SHOTS = UPDATE_SHOTS ? resolve(import.meta.dirname, '../docs/console') : mkdtempSync(join(tmpdir(), 'herald-shots-'));

describe('operator console in Chromium', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  let context: BrowserContext;
  let page: Page;
  const profile = mkdtempSync(join(tmpdir(), 'herald-chromium-'));

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    mkdirSync(SHOTS, { recursive: true });
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    gw = await startGateway({
      env: telegramEnv(tg, llm, {
        HERALD_ADMIN_TOKEN: TOKEN,
        HERALD_API_KEYS: API_KEY,
        GATEWAY_ALLOW_ALL_USERS: 'false',
        TELEGRAM_ALLOWED_USERS: String(OWNER),
      }),
    });
    // A conversation with a tool call in it, for the transcript.
    llm.script(
      { text: 'Checking the clock.', toolCalls: [{ name: 'current_time', arguments: '{"timezone":"UTC"}' }] },
      { text: 'It is tea time for the pumpernickel.' },
    );
    tg.injectMessage({ chatId: OWNER, userId: OWNER, text: 'what time is it? ask about pumpernickel', firstName: 'Owner' });
    await waitFor(() => repliesIn(tg, OWNER).includes('It is tea time for the pumpernickel.'), { what: 'the owner answered' });
    // An API client's conversation, named by the X-Herald-Session header.
    const api = new OpenAI({ apiKey: API_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-herald-session': 'support-bot' } });
    await api.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'hello from the help widget' }] });
    await seedSpend(gw.dbPath);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_FLAGS,
      headless: true,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  });
  afterAll(async () => {
    await context?.close();
    await gw?.stop();
    await tg?.close();
    await llm?.close();
    rmSync(profile, { recursive: true, force: true });
    // Screenshots are kept only where the README shows them.
    if (!UPDATE_SHOTS) rmSync(SHOTS, { recursive: true, force: true });
  });

  it('logs in with the keyboard; the cookie is HttpOnly and SameSite=Strict; the overview shows health and a live queue depth', async () => {
    await page.goto(`${gw.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    // The token field gets focus by itself (autofocus; on a loaded machine Chromium may apply it a moment after the
    // load event, and keys typed before then go nowhere): type the token and press Enter, no mouse.
    await expect.poll(() => page.evaluate('document.activeElement?.id'), { timeout: 15_000 }).toBe('token');
    await page.keyboard.type(TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${gw.url}/console`);
    const cookie = (await context.cookies(`${gw.url}/console`)).find((c) => c.name === 'herald_console')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie.value).not.toContain(TOKEN);

    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.getByRole('main').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Console' }).count()).toBe(1);
    expect(await page.locator('.card', { hasText: 'Workers' }).textContent()).toContain('1 seen');
    expect(await page.locator('.card', { hasText: 'Redis' }).textContent()).toContain('up');
    expect(await page.locator('.card', { hasText: 'SQLite' }).textContent()).toContain('up');
    expect(await page.getByRole('row', { name: /telegram/ }).textContent()).toContain('connected');
    // The script (allowed by the page's CSP) refreshes the queue depth.
    const first = await page.locator('[data-updated]').textContent();
    await expect.poll(() => page.locator('[data-updated]').textContent(), { timeout: 15_000 }).not.toBe(first);
    await shot(page, 'overview');

    // The queue paused in the dashboard: the live refresh shows the notice, and takes it away once resumed.
    const notice = page.getByRole('status').filter({ hasText: 'Paused: messages wait in the queue' });
    expect(await notice.isVisible()).toBe(false);
    const queueAction = (action: string): Promise<Response> =>
      fetch(`${gw.url}/admin/queues/api/queues/${action}`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` } });
    try {
      expect((await queueAction('pause')).status).toBe(200);
      await expect.poll(() => notice.isVisible(), { timeout: 15_000 }).toBe(true);
    } finally {
      expect((await queueAction('resume')).status).toBe(200);
    }
    await expect.poll(() => notice.isVisible(), { timeout: 15_000 }).toBe(false);
  });

  it('approves a pairing request with the code the stranger got; the stranger is answered afterwards', async () => {
    tg.injectMessage({ chatId: STRANGER, userId: STRANGER, text: 'hello, may I?', firstName: 'Stranger', userName: 'stranger' });
    const pairingText = await waitFor(() => repliesIn(tg, STRANGER).find((t) => t.includes('pairing code')), { what: 'the pairing code' });
    const code = /^([A-Z0-9]{8})$/m.exec(pairingText)![1];

    await page.getByRole('link', { name: 'Pairing' }).click();
    await page.waitForURL(`${gw.url}/console/pairing`);
    const row = page.getByRole('row', { name: new RegExp(String(STRANGER)) });
    expect(await row.textContent()).toContain('telegram');
    await shot(page, 'pairing');
    // A wrong code first: refused, nobody approved.
    await row.getByLabel(/^Code from/).fill('WRONGCODE');
    await row.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('does not match');
    await page
      .getByRole('row', { name: new RegExp(String(STRANGER)) })
      .getByLabel(/^Code from/)
      .fill(code.toLowerCase());
    await page
      .getByRole('row', { name: new RegExp(String(STRANGER)) })
      .getByRole('button', { name: 'Approve' })
      .click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved');
    expect(await page.getByRole('table', { name: 'Paired people' }).textContent()).toContain(String(STRANGER));

    tg.injectMessage({ chatId: STRANGER, userId: STRANGER, text: 'thanks for letting me in', firstName: 'Stranger' });
    await waitFor(() => repliesIn(tg, STRANGER).includes('ok: thanks for letting me in'), { what: 'the stranger answered' });
  });

  it('refuses a state-changing request without the CSRF token, and one from another site', async () => {
    const noToken = await page.evaluate(async () => {
      const res = await fetch('/console/pairing/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'platform=telegram&user_id=501',
      });
      return res.status;
    });
    expect(noToken).toBe(403);
    const cookie = (await context.cookies(`${gw.url}/console`)).find((c) => c.name === 'herald_console')!;
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const crossSite = await fetch(`${gw.url}/console/pairing/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `herald_console=${cookie.value}`, origin: 'https://evil.example' },
      body: `platform=telegram&user_id=${STRANGER}&_csrf=${csrf}`,
    });
    expect(crossSite.status).toBe(403);
    await page.reload();
    expect(await page.getByRole('table', { name: 'Paired people' }).textContent()).toContain(String(STRANGER));
  });

  it('tells sessions of the same minute apart: first message and user name, an API session by its name; an unpriced model reads "price unknown"', async () => {
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(`${gw.url}/console/sessions`);
    const table = page.getByRole('table', { name: 'Sessions, newest first' });
    // Owner and stranger started talking within the same minute or so: their ids begin alike, their rows do not.
    const owner = table.getByRole('row', { name: /what time is it\? ask about pumpernickel/ });
    const stranger = table.getByRole('row', { name: /thanks for letting me in/ });
    expect(await owner.textContent()).toContain(`Owner ${OWNER}`);
    expect(await stranger.textContent()).toContain(`Stranger ${STRANGER}`);
    expect(await owner.locator('time').first().textContent()).toMatch(/just now|min ago/);
    const ownerName = await owner.getByRole('link').textContent();
    expect(ownerName).not.toBe(await stranger.getByRole('link').textContent());
    expect(ownerName).not.toMatch(/^[0-9a-f]{8}$/);

    const api = table.getByRole('row', { name: /support-bot/ });
    expect(await api.getByRole('link').textContent()).toBe('support-bot');
    expect(await api.textContent()).toMatch(/api.*via API key key-[0-9a-f]{10}/s);

    const unpriced = table.getByRole('row', { name: /seed-5/ });
    expect(await unpriced.getByRole('cell').nth(6).textContent()).toBe('price unknown');
    await unpriced.getByRole('link', { name: 'price unknown' }).click();
    expect(await page.locator('#price-hint').textContent()).toMatch(/Price unknown for openai:my-local-llama: .*HERALD_PRICES='\{"openai:my-local-llama"/s);
    await shot(page, 'sessions');
  });

  it('says the OpenAI-compatible API is on, and answers an unknown console URL with an HTML page', async () => {
    await page.goto(`${gw.url}/console`);
    const api = page.getByRole('region', { name: 'OpenAI-compatible API' });
    expect(await api.locator('.state').textContent()).toBe('On');
    expect(await api.textContent()).toContain('this process answers the OpenAI-compatible API at /v1');

    const res = await page.goto(`${gw.url}/console/no-such-page`);
    expect(res?.status()).toBe(404);
    expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');
    expect(await page.getByRole('main').textContent()).toContain('The console has no page at /console/no-such-page.');
    await page.getByRole('main').getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL(`${gw.url}/console`);
  });

  it('searches the transcripts and opens one; the tool call is folded and opens from the keyboard', async () => {
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByLabel('Search transcripts').fill('pumpernickel');
    await page.getByLabel('Search transcripts').press('Enter');
    await page.waitForURL(/\/console\/sessions\?q=pumpernickel/);
    expect(await page.locator('mark').first().textContent()).toBe('pumpernickel');
    await page
      .getByRole('row', { name: /pumpernickel/ })
      .first()
      .getByRole('link')
      .click();
    await page.waitForURL(/\/console\/sessions\/[0-9a-f-]+$/);

    const call = page.locator('details.tool-call');
    expect(await call.count()).toBe(1);
    expect(await call.getAttribute('open')).toBeNull();
    expect(await call.locator('pre').isVisible()).toBe(false);
    await call.locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await call.locator('pre').textContent()).toContain('"timezone": "UTC"');
    expect(await page.locator('details.tool-result summary').textContent()).toBe('Tool result: current_time');
    expect(await page.locator('.msg.assistant .text').last().textContent()).toBe('It is tea time for the pumpernickel.');
    await shot(page, 'transcript');
  });

  it('shows usage and spend per model and per profile with a chart', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(`${gw.url}/console/usage`);
    const byModel = page.getByRole('table', { name: 'Usage by model' });
    expect(await byModel.textContent()).toContain('anthropic:claude-sonnet-4-5');
    expect(await byModel.textContent()).toContain('$3.10');
    const byProfile = page.getByRole('table', { name: 'Usage by agent profile' });
    const rows = byProfile.locator('tbody tr');
    expect(await rows.nth(0).textContent()).toMatch(/^research.*\$3\.10$/s);
    // The seeded $0.85 plus what this test's own conversations cost at the stand-in's token counts.
    expect(await rows.nth(1).textContent()).toMatch(/^default.*\$0\.85\d*$/s);
    const chart = page.getByRole('img', { name: /Estimated spend per day/ });
    expect(await chart.locator('rect').count()).toBeGreaterThanOrEqual(4);
    await shot(page, 'usage');
  });

  it('is usable on a phone: nothing wider than the screen, every control labelled, landmarks in place', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ['/console', '/console/sessions', '/console/pairing', '/console/usage', '/console/no-such-page']) {
      await page.goto(`${gw.url}${path}`);
      const fits = await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');
      expect(fits, `${path} fits a 390 px screen`).toBe(true);
      // Every visible control has a <label> of its own.
      const unlabelled = await page.evaluate(
        "[...document.querySelectorAll('input:not([type=hidden]), select')].filter((el) => !el.labels || el.labels.length === 0).map((el) => el.outerHTML)",
      );
      expect(unlabelled, `${path}: unlabelled controls`).toEqual([]);
      expect(await page.locator('header, nav, main').count()).toBe(3);
    }
    await page.goto(`${gw.url}/console`);
    await shot(page, 'overview-phone');
    await page.goBack();
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('logs out: the cookie is gone and the console asks for the token again', async () => {
    await page.goto(`${gw.url}/console`);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/console\/login$/);
    await page.goto(`${gw.url}/console/usage`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console/usage');
  });
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * Spend to chart: sessions over the last few days on two models, written into the gateway's store as turns would
 * have left them (estimated_cost_usd is what the agent loop records per session).
 */
async function seedSpend(dbPath: string): Promise<void> {
  const store = await SessionStore.open(dbPath);
  try {
    const rows: Array<[number, string, number, number]> = [
      [3, 'openai:gpt-4.1-mini', 120_000, 0.4],
      [2, 'anthropic:claude-sonnet-4-5', 60_000, 1.2],
      [2, 'openai:gpt-4.1-mini', 90_000, 0.3],
      [1, 'anthropic:claude-sonnet-4-5', 80_000, 1.9],
      [0, 'openai:gpt-4.1-mini', 40_000, 0.15],
      // A model with no known price (a local one): its cost stays 0, which the console shows as "price unknown".
      [0, 'openai:my-local-llama', 10_000, 0],
    ];
    for (const [i, [daysAgo, model, tokens, cost]] of rows.entries()) {
      await store.sql.run(
        `INSERT INTO sessions (id, key, source, user_id, model, started_at, ended_at, end_reason, message_count, input_tokens, output_tokens, estimated_cost_usd, profile)
         VALUES (?, ?, 'slack', 'U-seed', ?, ?, ?, 'idle', 4, ?, ?, ?, ?)`,
        // The Claude sessions belong to a `research` profile, the local model's to `local`; the others to the default one.
        [
          `seed-${i}`,
          `agent:main:slack:dm:seed${i}`,
          model,
          Date.now() - daysAgo * DAY - 3_600_000,
          Date.now() - daysAgo * DAY,
          tokens * 0.8,
          tokens * 0.2,
          cost,
          model.startsWith('anthropic') ? 'research' : model.includes('local') ? 'local' : null,
        ],
      );
    }
  } finally {
    await store.close();
  }
}
