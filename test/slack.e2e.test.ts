/**
 * Slack through the real gateway (issue 7): the gateway process with real Redis and a temp SQLite file, the Slack
 * stand-in (real @slack/bolt and @slack/web-api inside the gateway) on both transports — Socket Mode and Events
 * over HTTP — and the OpenAI stand-in. Each transport gets one shared gateway; tests use their own users and
 * channels, so they do not see each other's messages.
 */
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { signSlackRequest, startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { readStoreFile } from './helpers/store-rows.js';
import { allSlackRepliesIn, reactionHistory, reactionsOn, slackEnv, slackRepliesIn, waitForSlackIngress, type SlackTransportKind } from './helpers/slack.js';

const REPLY_TIMEOUT_MS = 15_000;
/** User texts starting with this make the LLM stand-in wait until the test releases them. */
const HOLD = 'hold';
const TURN_QUEUE = 'turns';
/** The gateway's warning for an Events request it refused (packages/adapters/src/slack/events-http.ts). */
const SIGNATURE_REJECTED_LOG = 'slack: rejected an Events request with a bad signature or stale timestamp';

interface SessionRow {
  id: string;
  key: string;
  source: string;
  user_id: string | null;
  chat_id: string | null;
}

/** The LLM stand-in answers `ok: <text>`; texts starting with `hold` wait for `release()`. */
function gatedResponder(): { respond: (req: RecordedRequest) => Promise<Step>; release: () => void } {
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  return {
    respond: async (req) => {
      const text = lastUserText(req);
      if (text.startsWith(HOLD)) await gate;
      return { text: `ok: ${text}` };
    },
    release: () => {
      open();
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

function sessions(dbPath: string, where: string, ...params: string[]): SessionRow[] {
  return readStoreFile(dbPath, (db) => db.prepare(`SELECT id, key, source, user_id, chat_id FROM sessions WHERE ${where}`).all(...params) as SessionRow[]);
}

function userTexts(dbPath: string, sessionId: string): string[] {
  const rows = readStoreFile(
    dbPath,
    (db) => db.prepare(`SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id`).all(sessionId) as Array<{ content: string }>,
  );
  return rows.map((r) => r.content);
}

/** Every job the turn queue ever held (completed ones are kept for an hour): a refused request must add none. */
async function turnJobsEver(cluster: Cluster): Promise<number> {
  const queue = new Queue(TURN_QUEUE, { connection: { url: 'redis://127.0.0.1:6379' }, prefix: cluster.prefix });
  try {
    return Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);
  } finally {
    await queue.close();
  }
}

/** A DM message event as Slack sends it, for delivering by hand (forged, stale, replayed). */
function dmEvent(slack: SlackFake, user: string, text: string): { channel: string; event: { type: string; ts: string } & Record<string, unknown> } {
  const channel = slack.dmChannel(user);
  const ts = `${Math.floor(Date.now() / 1000)}.000777`;
  return { channel, event: { type: 'message', channel, user, text, ts, event_ts: ts, channel_type: 'im', team: slack.teamId } };
}

function llmSaw(llm: FakeLLM, text: string): number {
  return llm.requests.filter((r) => lastUserText(r).includes(text)).length;
}

interface Harness {
  slack: SlackFake;
  llm: FakeLLM;
  cluster: Cluster;
  gate: ReturnType<typeof gatedResponder>;
}

/** One gateway per transport: HTTP as one `all` process, Socket Mode as an ingress plus a worker process. */
function useGateway(transport: SlackTransportKind): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    h.slack = await startSlackFake();
    h.llm = await startFakeOpenAI();
    h.gate = gatedResponder();
    h.llm.respondWith(h.gate.respond);
    // Queue mode, so a message sent while its conversation is busy waits as its own turn (the reaction test).
    const env = slackEnv(h.slack, h.llm, transport, { HERALD_BUSY_INPUT_MODE: 'queue' });
    h.cluster = await startCluster({ workers: transport === 'socket' ? 1 : 0, env });
    await waitForSlackIngress(h.slack, h.cluster, transport);
  });
  // A failed test must not leave a held LLM call (and a busy session) behind for the next one.
  afterEach(() => h.gate?.release());
  afterAll(async () => {
    h.gate?.release();
    await h.cluster?.stop();
    await h.slack?.close();
    await h.llm?.close();
  });
  return h;
}

function sharedScenarios(h: Harness): void {
  it('a DM "hello" gets one reply in that DM, and the session is stored with source slack', async () => {
    const { slack, cluster } = h;
    const d = await slack.dm({ user: 'U0ALICE', text: 'hello' });
    expect(d.responses.map((r) => r.status).every((s) => s === 200)).toBe(true);
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the reply to hello' });
    expect(slackRepliesIn(slack, d.channel)).toEqual(['ok: hello']);
    expect(allSlackRepliesIn(slack, d.channel)).toEqual(['ok: hello']); // at the DM's top level, not in a thread
    // Socket Mode: the gateway acknowledged the envelope, so Slack does not send it again.
    for (const id of d.envelopeIds) await slack.socket.waitFor(() => slack.socket.isAcked(id), REPLY_TIMEOUT_MS, 'the ack');

    const rows = sessions(cluster.dbPath, 'chat_id = ?', d.channel);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ source: 'slack', key: `agent:main:slack:dm:${d.channel}`, user_id: 'U0ALICE' });
    expect(userTexts(cluster.dbPath, rows[0].id)).toEqual(['hello']);
  });

  it('the same event delivered again as a Slack retry gets one reply', async () => {
    const { slack, llm } = h;
    const d = await slack.dm({ user: 'U0BOB', text: 'only once please' });
    // Slack retries when it thinks the first delivery was lost: once while the turn runs, once after the reply.
    await slack.redeliver(d.bodies[0], 1);
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the reply' });
    const late = await slack.redeliver(d.bodies[0], 2);
    for (const r of [...d.responses, ...late.responses]) expect(r.status).toBe(200);
    // A later message in the same DM is answered after anything queued before it, so a duplicate would show by now.
    await slack.dm({ user: 'U0BOB', text: 'next one' });
    await waitFor(() => slackRepliesIn(slack, d.channel).includes('ok: next one'), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the barrier reply' });
    expect(slackRepliesIn(slack, d.channel)).toEqual(['ok: only once please', 'ok: next one']);
    expect(llmSaw(llm, 'only once please')).toBe(1);
  });

  it('a mention in a channel is answered in a thread; a follow-up there needs no mention; a plain channel message is ignored', async () => {
    const { slack, llm, cluster } = h;
    const channel = 'C0GENERAL';
    const root = await slack.channelMessage({ channel, user: 'U0CAROL', text: `<@${slack.botUserId}> what is Herald?` });
    await waitFor(() => slackRepliesIn(slack, channel, root.ts).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the threaded reply' });
    expect(slackRepliesIn(slack, channel, root.ts)).toEqual(['ok: what is Herald?']);
    expect(slackRepliesIn(slack, channel)).toEqual([]); // nothing at the channel's top level

    await slack.channelMessage({ channel, user: 'U0CAROL', text: 'and who runs it?', threadTs: root.ts });
    await waitFor(() => slackRepliesIn(slack, channel, root.ts).length >= 2, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the follow-up reply' });
    expect(slackRepliesIn(slack, channel, root.ts)).toEqual(['ok: what is Herald?', 'ok: and who runs it?']);
    // Same session: the model saw the first exchange as history, and SQLite holds one thread session with both.
    const followUp = llm.requests.find((r) => lastUserText(r) === 'and who runs it?');
    expect(JSON.stringify(followUp?.body.messages)).toContain('what is Herald?');
    const rows = sessions(cluster.dbPath, 'key = ?', `agent:main:slack:thread:${channel}:${root.ts}`);
    expect(rows).toHaveLength(1);
    expect(rows[0].source).toBe('slack');
    expect(userTexts(cluster.dbPath, rows[0].id)).toEqual(['what is Herald?', 'and who runs it?']);

    const plain = await slack.channelMessage({ channel, user: 'U0CAROL', text: 'just chatting, no bot here' });
    // A later mention is answered; by then the plain message would have been answered too if it were taken.
    const later = await slack.channelMessage({ channel, user: 'U0CAROL', text: `<@${slack.botUserId}> are you there?` });
    await waitFor(() => slackRepliesIn(slack, channel, later.ts).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the barrier reply' });
    expect(slackRepliesIn(slack, channel, plain.ts)).toEqual([]);
    expect(llmSaw(llm, 'just chatting')).toBe(0);
    expect(sessions(cluster.dbPath, 'key LIKE ?', `%${plain.ts}%`)).toEqual([]);
  });

  it('the message gets 👀 while its turn runs, replaced by ✅ once answered; a queued message gets 👀 at once, while it waits', async () => {
    const { slack, llm, gate } = h;
    const first = await slack.dm({ user: 'U0ERIN', text: `${HOLD} this for a moment` });
    await waitFor(() => llm.activeRequests() > 0 && llmSaw(llm, `${HOLD} this`) === 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the LLM call' });
    await waitFor(() => reactionsOn(slack, first.channel, first.ts).includes('eyes'), { timeoutMs: REPLY_TIMEOUT_MS, what: '👀' });
    expect(reactionsOn(slack, first.channel, first.ts)).toEqual(['eyes']);

    // Sent while the first turn runs: queued (the gateway says so, and 👀 shows it was taken), not worked on yet.
    const second = await slack.dm({ user: 'U0ERIN', text: 'and then this' });
    await waitFor(() => slackRepliesIn(slack, first.channel).some((t) => t.startsWith('⏳ Queued')), {
      timeoutMs: REPLY_TIMEOUT_MS,
      what: 'the queued notice',
    });
    expect(reactionsOn(slack, second.channel, second.ts)).toEqual(['eyes']);
    expect(llmSaw(llm, 'and then this')).toBe(0);
    expect(reactionsOn(slack, first.channel, first.ts)).toEqual(['eyes']);

    gate.release();
    await waitFor(() => reactionsOn(slack, second.channel, second.ts).includes('white_check_mark'), { timeoutMs: REPLY_TIMEOUT_MS, what: '✅ on the second' });
    expect(slackRepliesIn(slack, first.channel).filter((t) => t.startsWith('ok:'))).toEqual(['ok: hold this for a moment', 'ok: and then this']);
    for (const m of [first, second]) {
      expect(reactionsOn(slack, m.channel, m.ts)).toEqual(['white_check_mark']);
      expect(reactionHistory(slack, m.channel, m.ts)).toEqual(['+eyes', '-eyes', '+white_check_mark']);
    }
    // ✅ comes after the reply was posted, not before.
    const callIndex = (pred: (c: SlackFake['calls'][number]) => boolean): number => slack.calls.findIndex(pred);
    const replied = callIndex((c) => c.method === 'chat.postMessage' && c.args.text === 'ok: hold this for a moment');
    const done = callIndex((c) => c.method === 'reactions.add' && c.args.timestamp === first.ts && c.args.name === 'white_check_mark');
    expect(replied).toBeGreaterThanOrEqual(0);
    expect(done).toBeGreaterThan(replied);
  });
}

describe('Slack over Events HTTP (one gateway process)', () => {
  const h = useGateway('http');
  sharedScenarios(h);

  it('a forged signature and a 10-minute-old timestamp get 401 and make no job; the genuine event is answered once', async () => {
    const { slack, llm, cluster } = h;
    const { channel, event } = dmEvent(slack, 'U0MALLORY', 'let me in');
    const eventId = 'Ev0FORGED01';

    const jobsBefore = await turnJobsEver(cluster);
    const forged = await slack.deliver(event, { eventId, forgeSignature: true });
    const stale = await slack.deliver(event, { eventId, timestampSec: Math.floor(Date.now() / 1000) - 600 });
    expect(forged.responses.map((r) => r.status)).toEqual([401]);
    expect(stale.responses.map((r) => r.status)).toEqual([401]);
    expect(await turnJobsEver(cluster)).toBe(jobsBefore);
    expect(llmSaw(llm, 'let me in')).toBe(0);
    expect(sessions(cluster.dbPath, 'chat_id = ?', channel)).toEqual([]);

    // The very same event, properly signed: the rejected attempts left nothing behind, not even its event id.
    const genuine = await slack.deliver(event, { eventId });
    expect(genuine.responses.map((r) => r.status)).toEqual([200]);
    await waitFor(() => slackRepliesIn(slack, channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the genuine reply' });
    expect(slackRepliesIn(slack, channel)).toEqual(['ok: let me in']);
  });

  it('a captured request replayed with another body is refused; replayed as is once over 5 minutes old, refused too', async () => {
    const { slack, llm, cluster } = h;
    const user = 'U0REPLAY';
    const { channel, event } = dmEvent(slack, user, 'pay invoice 42');
    // Signed 295 s ago: inside Slack's 5-minute window, so taken and answered.
    const signedAt = Math.floor(Date.now() / 1000) - 295;
    const genuine = await slack.deliver(event, { eventId: 'Ev0REPLAY01', timestampSec: signedAt });
    expect(genuine.responses.map((r) => r.status)).toEqual([200]);
    await waitFor(() => slackRepliesIn(slack, channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the genuine reply' });

    // What an eavesdropper kept: the exact bytes and headers Slack sent.
    const captured = JSON.stringify(genuine.bodies[0]);
    const post = (body: string, timestampSec: number, signature: string): Promise<Response> =>
      fetch(`${cluster.ingress.url}/slack/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestampSec), 'x-slack-signature': signature },
        body,
      });
    const jobsBefore = await turnJobsEver(cluster);
    const rejected = (): number => cluster.ingress.logs().filter((l) => l.msg === SIGNATURE_REJECTED_LOG).length;
    const rejectedBefore = rejected();

    // A fresh, valid signature of the captured body, sent with another body (another event id, another order).
    const now = Math.floor(Date.now() / 1000);
    const tampered = captured.replace('pay invoice 42', 'pay invoice 666').replace('Ev0REPLAY01', 'Ev0REPLAY02');
    expect((await post(tampered, now, signSlackRequest(slack.signingSecret, now, captured))).status).toBe(401);

    // The captured request as is, once its timestamp has left the window (the clock is the condition here).
    await waitFor(() => Math.floor(Date.now() / 1000) > signedAt + 300, { timeoutMs: 15_000, what: 'the capture to be over 5 minutes old' });
    expect((await post(captured, signedAt, signSlackRequest(slack.signingSecret, signedAt, captured))).status).toBe(401);

    // The gateway says why it refused them (its log arrives a moment after the answer).
    await waitFor(() => rejected() >= rejectedBefore + 2, { what: 'the two refusals in the gateway log' });
    expect(rejected()).toBe(rejectedBefore + 2);
    expect(await turnJobsEver(cluster)).toBe(jobsBefore);
    // A later message in the DM is answered after anything the replays could have queued.
    await slack.dm({ user, text: 'anything else?' });
    await waitFor(() => slackRepliesIn(slack, channel).length >= 2, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the barrier reply' });
    expect(slackRepliesIn(slack, channel)).toEqual(['ok: pay invoice 42', 'ok: anything else?']);
    expect(llmSaw(llm, 'pay invoice 42')).toBe(1);
    expect(llmSaw(llm, 'pay invoice 666')).toBe(0);
  });
});

describe('Slack over Socket Mode (an ingress and a worker process)', () => {
  const h = useGateway('socket');
  sharedScenarios(h);

  it('the connection dropped mid-conversation: the turn still answers, the adapter reconnects, the next DM is answered', async () => {
    const { slack, llm, gate } = h;
    const connectionsBefore = slack.socket.totalConnections;
    const d = await slack.dm({ user: 'U0FRANK', text: `${HOLD} on while the line drops` });
    await waitFor(() => llmSaw(llm, `${HOLD} on while`) === 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the LLM call' });

    slack.socket.drop();
    await slack.socket.waitFor(
      () => slack.socket.totalConnections > connectionsBefore && slack.socket.openConnections === 1,
      REPLY_TIMEOUT_MS,
      'the gateway to reconnect',
    );
    gate.release();
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the held reply' });

    const next = await slack.dm({ user: 'U0FRANK', text: 'still there?' });
    await waitFor(() => slackRepliesIn(slack, d.channel).length >= 2, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the reply after the reconnect' });
    await slack.socket.waitFor(() => slack.socket.isAcked(next.envelopeIds[0]), REPLY_TIMEOUT_MS, 'the ack');
    expect(slackRepliesIn(slack, d.channel)).toEqual(['ok: hold on while the line drops', 'ok: still there?']);
  });
});
