/**
 * `herald chat [--resume <session id>]` (issue 53 M7): an interactive chat in the terminal with the configured agent
 * — the same model chain, system prompt, built-in tools and saved notes, the same store — streaming the reply as
 * it comes. Without --resume a new conversation starts (source `cli`); with it, the stored session goes on (its
 * history sent, the new exchange appended). One line is one message; `/exit` or the end of input leaves.
 * The gateway's own parts (queues, platforms, schedules, MCP servers) are not involved.
 */
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createBuiltinTools, prefetchMemoryBlock, runConversation, type Session, type SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';
import { HERALD_COMMAND } from '../support/herald-command.js';
import { openConfiguredStore } from '../features/sessions/store-target.js';
import { buildAgentRuntime, type AgentRuntime } from '../turn/agent-runtime.js';
import { builtinToolsets } from '../turn/tools.js';
import { CliError, type CliIo } from './io.js';

export const CHAT_USAGE = `${HERALD_COMMAND} chat [--resume <session id>]     a chat in the terminal (streaming; /exit or end of input leaves)`;

export interface ChatStreams {
  input: NodeJS.ReadableStream;
  /** Reply text as it streams (no newline added). */
  write: (text: string) => void;
}

export async function chatCommand(args: string[], config: HeraldConfig, io: CliIo, streams: ChatStreams): Promise<number> {
  const { values } = parseArgs({ args, options: { resume: { type: 'string' } }, strict: true });
  const agent = buildAgentRuntime(config);
  if (!agent) throw new CliError('HERALD_MODEL is not set: the chat needs a model');
  const store = await openConfiguredStore(config);
  try {
    const session = await chatSession(store, config, agent, values.resume);
    io.out(`${values.resume ? 'Resumed' : 'New'} conversation ${session.id} (${session.messageCount} messages). /exit leaves.`);
    const lines = createInterface({ input: streams.input, terminal: false });
    for await (const line of lines) {
      const text = line.trim();
      if (text === '/exit') break;
      if (text) await chatTurn(store, config, agent, session, text, streams.write);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** The stored session named, or a new CLI conversation of the person at this terminal. */
async function chatSession(store: SessionStore, config: HeraldConfig, agent: AgentRuntime, resume: string | undefined): Promise<Session> {
  if (resume !== undefined) {
    const found = await store.getSession(resume);
    if (!found) throw new CliError(`no session ${JSON.stringify(resume)} (npx herald sessions list shows them)`);
    return found;
  }
  const user = cliUser();
  return store.startNewSession(`agent:main:cli:dm:${user}:${randomUUID().slice(0, 8)}`, {
    source: 'cli',
    userId: user,
    chatId: user,
    ...(config.model ? { model: config.model } : {}),
    systemPrompt: agent.systemPrompt,
  });
}

async function chatTurn(
  store: SessionStore,
  config: HeraldConfig,
  agent: AgentRuntime,
  session: Session,
  text: string,
  write: (t: string) => void,
): Promise<void> {
  const userKey = `cli:${session.userId ?? cliUser()}`;
  const { tools } = createBuiltinTools(
    { store, provider: agent.primary, fallbacks: agent.fallbacks, fallbackState: agent.fallbackState, timeZone: config.timezone },
    builtinToolsets(config.toolsets),
  );
  const notes = await prefetchMemoryBlock(store, userKey);
  const result = await runConversation({
    userMessage: text,
    history: await store.getHistory(session.id),
    systemPrompt: session.systemPrompt ?? agent.systemPrompt,
    ...(config.ephemeralSystemPrompt ? { ephemeralSystemPrompt: config.ephemeralSystemPrompt } : {}),
    ...(notes ? { requestContext: notes } : {}),
    provider: agent.primary,
    fallbacks: agent.fallbacks,
    fallbackState: agent.fallbackState,
    maxIterations: agent.maxIterations,
    cacheKey: session.id,
    tools,
    toolContext: { sessionId: session.id, userId: session.userId, platform: 'cli', userKey },
    onEvent: (e) => {
      if (e.type === 'text_delta') write(e.text);
    },
  });
  write(result.finalResponse ? '\n' : `(no answer${result.error ? `: ${result.error.message}` : ''})\n`);
  await store.appendMessages(session.id, result.newMessages, {
    usage: { ...result.usage, apiCalls: result.apiCalls, ...(result.lastPromptTokens ? { lastPromptTokens: result.lastPromptTokens } : {}) },
  });
}

function cliUser(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}
