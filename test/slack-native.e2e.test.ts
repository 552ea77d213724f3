/**
 * Issue 21 on Slack, end to end, over both transports: choices as Block Kit buttons; a press (block_actions, a
 * signed form POST over HTTP or an `interactive` envelope over Socket Mode) is acknowledged at once and counts as
 * typing the choice; a stale or someone else's press gets a note only the presser sees (chat.postEphemeral).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { CLARIFY_QUESTION, clarifyScript } from './helpers/clarify-script.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { waitFor } from './helpers/ports.js';
import { slackEnv, slackRepliesIn, waitForSlackIngress, type SlackTransportKind } from './helpers/slack.js';

const STALE = '⌛ This button is no longer active (already used, answered, or expired).';
const FOREIGN = '🙅 These buttons are for the person who asked; yours would not count.';

describe.each<SlackTransportKind>(['socket', 'http'])('slack native interactions over %s (issue 21)', (transport) => {
  let slack: SlackFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    slack = await startSlackFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => clarifyScript(req));
    cluster = await startCluster({ workers: 0, env: slackEnv(slack, llm, transport, { HERALD_TOOLSETS: 'full', SLACK_SLASH_COMMANDS: 'each' }) });
    await waitForSlackIngress(slack, cluster, transport);
  });

  afterAll(async () => {
    await cluster?.stop();
    await slack?.close();
    await llm?.close();
  });

  /** The last bot message in a channel with buttons: its ts and its buttons' action ids by label. */
  function buttonsIn(channel: string): { ts: string; actions: Record<string, string> } | null {
    for (const sent of [...slack.sent].reverse()) {
      if (sent.channel !== channel) continue;
      const blocks = slack.message(channel, sent.ts)?.blocks as
        | Array<{ type: string; elements?: Array<{ action_id: string; text: { text: string } }> }>
        | undefined;
      const actions = blocks?.find((b) => b.type === 'actions');
      if (actions?.elements) return { ts: sent.ts, actions: Object.fromEntries(actions.elements.map((e) => [e.text.text, e.action_id])) };
    }
    return null;
  }

  it('a clarify question comes with buttons; a press answers the running turn; a late press gets a private note', async () => {
    const user = 'U21CLAR';
    const dm = slack.dmChannel(user);
    await slack.dm({ user, text: 'book a table' });
    await waitFor(() => buttonsIn(dm) !== null, { what: 'the question with buttons' });
    const question = buttonsIn(dm);
    expect(slackRepliesIn(slack, dm)[0]).toContain(CLARIFY_QUESTION);
    expect(Object.keys(question?.actions ?? {})).toEqual(['2', '4']);

    const press = await slack.pressButton({ user, channel: dm, ts: question?.ts ?? '', actionId: question?.actions['4'] ?? '' });
    if (transport === 'http') expect(press.response?.status).toBe(200);
    await waitFor(() => slackRepliesIn(slack, dm).includes('Booked. (The user answered: 4)'), { what: 'the turn finished with the pressed answer' });

    await slack.pressButton({ user, channel: dm, ts: question?.ts ?? '', actionId: question?.actions['2'] ?? '' });
    await waitFor(() => slack.ephemerals.some((e) => e.user === user && e.text === STALE), { what: 'the stale note' });
    expect(slack.ephemerals.filter((e) => e.user === user)).toEqual([{ channel: dm, user, text: STALE }]);
  });

  it("someone else's press on a /resume picker in a channel thread is refused privately; the asker's resumes", async () => {
    const alice = 'U21ALICE';
    const bob = 'U21BOB';
    const channel = 'C21NATIVE';
    const opened = await slack.channelMessage({ channel, user: alice, text: `<@${slack.botUserId}> /title Roadmap` });
    await waitFor(() => slackRepliesIn(slack, channel, opened.ts).some((t) => t.startsWith('🏷')), { what: 'the title' });
    await slack.channelMessage({ channel, user: alice, text: '/new', threadTs: opened.ts });
    await waitFor(() => slackRepliesIn(slack, channel, opened.ts).some((t) => t.startsWith('✨')), { what: 'the reset' });
    await slack.channelMessage({ channel, user: alice, text: '/resume', threadTs: opened.ts });
    await waitFor(() => buttonsIn(channel) !== null, { what: 'the picker' });
    const picker = buttonsIn(channel);

    await slack.pressButton({ user: bob, channel, ts: picker?.ts ?? '', actionId: picker?.actions.Roadmap ?? '' });
    await waitFor(() => slack.ephemerals.some((e) => e.user === bob), { what: 'the note to Bob' });
    expect(slack.ephemerals.filter((e) => e.user === bob)).toEqual([{ channel, user: bob, text: FOREIGN, threadTs: opened.ts }]);

    await slack.pressButton({ user: alice, channel, ts: picker?.ts ?? '', actionId: picker?.actions.Roadmap ?? '' });
    await waitFor(() => slackRepliesIn(slack, channel, opened.ts).some((t) => t.startsWith('▶️ Resumed “Roadmap”')), { what: 'the resume' });
  });

  it('with SLACK_SLASH_COMMANDS=each, /herald-<command> works next to /herald <command>, acknowledged at once', async () => {
    const user = 'U21SLASH';
    const dm = slack.dmChannel(user);
    const titled = await slack.slashCommand({ user, text: 'Weekend plans', command: '/herald-title' });
    if (transport === 'http') expect(titled.response?.status).toBe(200);
    else await waitFor(() => slack.socket.acks.some((a) => a.envelopeId === titled.envelopeId), { what: 'the Socket Mode ack' });
    await waitFor(() => slackRepliesIn(slack, dm).includes('🏷 Titled “Weekend plans”.'), { what: 'the title answer' });
    await slack.slashCommand({ user, text: 'title' });
    await waitFor(() => slackRepliesIn(slack, dm).includes('This conversation is titled “Weekend plans”.'), { what: '/herald title' });
  });

  it("opening the App Home tab publishes the user's session status as its view", async () => {
    const user = 'U21HOME';
    await slack.dm({ user, text: 'hello home' });
    const dm = slack.dmChannel(user);
    await waitFor(() => slackRepliesIn(slack, dm).includes('ok: hello home'), { what: 'the answer' });
    const eventTs = `${Math.floor(Date.now() / 1000)}.000777`;
    await slack.deliver({ type: 'app_home_opened', user, channel: dm, tab: 'home', event_ts: eventTs });
    await waitFor(() => slack.homeViews.some((v) => v.userId === user), { what: 'the published home view' });
    const view = slack.homeViews.find((v) => v.userId === user)?.view as { type: string; blocks: Array<{ type: string; text?: { text: string } }> };
    expect(view.type).toBe('home');
    const status = view.blocks.find((b) => b.type === 'section')?.text?.text ?? '';
    expect(status).toMatch(/^Session /);
    expect(status).toContain('Messages 2');
    // Nothing was posted in the conversation for it.
    expect(slackRepliesIn(slack, dm)).toEqual(['ok: hello home']);
  });
});
