/** The bot's one Web API client at start-up: auth.test rides out Slack being unreachable, never a bad token. */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { createSlackClient, slackAuthTest } from './client.js';

let fake: SlackFake;
let warnings: string[];
const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(String(JSON.parse(line).msg)) });
const quickRetries = { retries: 5, minTimeout: 20, factor: 1 };

beforeEach(async () => {
  warnings = [];
  fake = await startSlackFake();
});
afterEach(() => fake.close());

describe('slackAuthTest', () => {
  it('waits for a Slack it cannot reach yet, then answers with the bot identity', async () => {
    await fake.stop();
    const client = createSlackClient({ botToken: fake.botToken, apiUrl: fake.apiUrl, logger });
    const me = slackAuthTest(client, logger, quickRetries);
    await waitFor(() => warnings.some((w) => w.includes('could not reach Slack')), 5_000, 'a failed auth.test');
    await fake.restart();
    expect((await me).user_id).toMatch(/^U/);
  });

  it('gives up at once on a token Slack refuses', async () => {
    const client = createSlackClient({ botToken: 'xoxb-wrong', apiUrl: fake.apiUrl, logger });
    await expect(slackAuthTest(client, logger, quickRetries)).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
    expect(warnings).toEqual([]);
  });
});
