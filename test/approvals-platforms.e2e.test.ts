/**
 * Issue 50, approvals on Slack (Block Kit buttons, Socket Mode) and Discord (message components), end to end through
 * the real SDKs inside the gateway and the platforms' stand-ins: a call of the test MCP server's destructive tool
 * waits for a press, runs on approve, is refused on deny and on timeout; each decision is audited (admin API).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { stdioServer } from './fakes/mcp/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { ARG_SECRET, DESTRUCTIVE_TOOL, approvalScript, auditedDecisions } from './helpers/approval-script.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { discordEnv, discordRepliesIn, waitForDiscordReady } from './helpers/discord.js';
import { waitFor } from './helpers/ports.js';
import { slackEnv, slackRepliesIn, waitForSlackIngress } from './helpers/slack.js';

const ADMIN_TOKEN = 'approvals-admin-token-0123456789';
const WAIT = { timeoutMs: 90_000 };
const APPROVE = '✅ Approve once';
const DENY = '⛔ Deny';

/** Gateway settings both platforms share: the MCP server, the admin API, a short approval timeout. */
function approvalEnv(timeoutS: number): Record<string, string> {
  return {
    HERALD_MCP_SERVERS: JSON.stringify({ local: stdioServer('local') }),
    HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    HERALD_APPROVAL_TIMEOUT_S: String(timeoutS),
  };
}

async function startWithMcp(env: Record<string, string>): Promise<Cluster> {
  const cluster = await startCluster({ workers: 0, env });
  await cluster.ingress.waitForLog((l) => String(l.msg).startsWith('mcp server local ready'), 'the MCP server');
  return cluster;
}

async function decisionFor(cluster: Cluster, id: number): Promise<Record<string, string>> {
  return waitFor(async () => (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).find((d) => d.args.includes(`"id":${id}`)), {
    ...WAIT,
    what: `the audit record of ticket ${id}`,
  }) as Promise<unknown> as Promise<Record<string, string>>;
}

describe('approvals on slack (issue 50)', () => {
  let slack: SlackFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    slack = await startSlackFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => approvalScript(req));
    cluster = await startWithMcp(slackEnv(slack, llm, 'socket', approvalEnv(600)));
    await waitForSlackIngress(slack, cluster, 'socket');
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    await slack?.close();
    await llm?.close();
  });

  /** The bot's messages in a channel that carry buttons: their ts, text and action ids by label. */
  function questionsIn(channel: string): Array<{ ts: string; text: string; actions: Record<string, string> }> {
    const out: Array<{ ts: string; text: string; actions: Record<string, string> }> = [];
    for (const sent of slack.sent) {
      if (sent.channel !== channel) continue;
      const message = slack.message(channel, sent.ts);
      const blocks = message?.blocks as Array<{ type: string; elements?: Array<{ action_id: string; text: { text: string } }> }> | undefined;
      const actions = blocks?.find((b) => b.type === 'actions');
      if (actions?.elements) {
        out.push({ ts: sent.ts, text: JSON.stringify(blocks), actions: Object.fromEntries(actions.elements.map((e) => [e.text.text, e.action_id])) });
      }
    }
    return out;
  }

  async function askAndPress(user: string, n: number, label: string): Promise<string> {
    const dm = slack.dmChannel(user);
    await slack.dm({ user, text: `delete ${n}` });
    const q = await waitFor(() => questionsIn(dm).at(-1), { ...WAIT, what: 'the approval question with buttons' });
    expect(q.text).toContain(DESTRUCTIVE_TOOL);
    expect(q.text).not.toContain(ARG_SECRET);
    expect(Object.keys(q.actions)).toEqual([APPROVE, '♾️ Always in this chat session', DENY]);
    expect(slackRepliesIn(slack, dm).some((r) => r.startsWith('results:'))).toBe(false);
    await slack.pressButton({ user, channel: dm, ts: q.ts, actionId: q.actions[label] ?? '' });
    return waitFor(() => slackRepliesIn(slack, dm).find((r) => r.startsWith('results:')), { ...WAIT, what: 'the result' });
  }

  it('waits for a Block Kit press: runs on approve, audited', async () => {
    expect(await askAndPress('U50APPROVE', 21, APPROVE)).toBe('results: local deleted ticket 21');
    expect(await decisionFor(cluster, 21)).toMatchObject({ platform: 'slack', decision: 'approved_once', decided_by: 'slack:U50APPROVE' });
  });

  it('is refused on deny, audited', async () => {
    expect(await askAndPress('U50DENY', 22, DENY)).toBe(`results: Not run: the user denied ${DESTRUCTIVE_TOOL}. Do not try it again unless they ask for it.`);
    expect(await decisionFor(cluster, 22)).toMatchObject({ platform: 'slack', decision: 'denied', decided_by: 'slack:U50DENY' });
  });
});

describe('approvals on discord (issue 50)', () => {
  const TIMEOUT_S = 20;
  let discord: DiscordFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    discord = await startDiscordFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => approvalScript(req));
    cluster = await startWithMcp(discordEnv(discord, llm, approvalEnv(TIMEOUT_S)));
    await waitForDiscordReady(cluster.ingress);
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    await discord?.close();
    await llm?.close();
  });

  function questionsIn(channelId: string): Array<{ messageId: string; text: string; ids: Record<string, string> }> {
    return discord.sent
      .filter((m) => m.channelId === channelId && m.components?.length)
      .map((sent) => {
        const ids: Record<string, string> = {};
        for (const row of sent.components ?? [])
          for (const b of (row.components ?? []) as Array<{ label: string; custom_id: string }>) ids[b.label] = b.custom_id;
        return { messageId: sent.id, text: sent.content, ids };
      });
  }

  /** Asks in the user's DM; presses `label` (or nothing); returns what the agent was told. */
  async function ask(who: 'alice' | 'bob', n: number, label: string | null): Promise<string> {
    const user = discord.fixtures[who];
    const dm = discord.openDm(user);
    const asked = questionsIn(dm).length;
    const answered = discordRepliesIn(discord, dm).filter((r) => r.startsWith('results:')).length;
    discord.postUserMessage({ channelId: dm, author: user, content: `delete ${n}` });
    const q = await waitFor(() => questionsIn(dm)[asked], { ...WAIT, what: 'the approval question with buttons' });
    expect(q.text).toContain(DESTRUCTIVE_TOOL);
    expect(q.text).not.toContain(ARG_SECRET);
    expect(Object.keys(q.ids)).toEqual([APPROVE, '♾️ Always in this chat session', DENY]);
    if (label) discord.pressButton({ user, channelId: dm, messageId: q.messageId, customId: q.ids[label] ?? '' });
    return waitFor(() => discordRepliesIn(discord, dm).filter((r) => r.startsWith('results:'))[answered], { ...WAIT, what: 'the result' });
  }

  it('waits for a component press: runs on approve, refused on deny, audited', async () => {
    expect(await ask('alice', 31, APPROVE)).toBe('results: local deleted ticket 31');
    expect(await decisionFor(cluster, 31)).toMatchObject({ platform: 'discord', decision: 'approved_once' });
    expect(await ask('alice', 32, DENY)).toBe(`results: Not run: the user denied ${DESTRUCTIVE_TOOL}. Do not try it again unless they ask for it.`);
    expect(await decisionFor(cluster, 32)).toMatchObject({ platform: 'discord', decision: 'denied' });
  });

  it('is refused when nobody decides before the timeout, audited as timed out', async () => {
    const started = Date.now();
    expect(await ask('bob', 33, null)).toBe(`results: Not run: nobody approved ${DESTRUCTIVE_TOOL} within ${TIMEOUT_S} s, so it was denied.`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_S * 1000);
    expect(await decisionFor(cluster, 33)).toMatchObject({ platform: 'discord', decision: 'timed_out', decided_by: 'timeout' });
  });
});
