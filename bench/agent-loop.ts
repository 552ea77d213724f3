/**
 * The agent loop's own cost per API call, against a zero-latency OpenAI stand-in on 127.0.0.1:
 *   raw SDK call (openai client, streamed)  →  Provider.complete (conversion + stream folding)  →  runConversation.
 * Each turn makes two calls (one tool call, then the answer). Overheads are differences of per-call medians over
 * interleaved rounds; they are small next to the HTTP round trip, so expect noise of the same order and compare
 * runs on one machine, not across machines.
 *
 * Run alone: npx tsx bench/agent-loop.ts
 */
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { createProvider, runConversation, type ChatMessage, type Provider, type Tool } from '@herald/agent-core';
import { startFakeOpenAI, type RecordedRequest, type Step } from '../test/fakes/llm/index.js';
import { median } from './timing.js';

const DEFAULT_TURNS = 500;
const WARMUP_TURNS = 50;
const ROUNDS = 5;
const API_KEY = 'bench-key';
const MODEL = 'bench-model';
const SYSTEM_PROMPT = 'You are Herald, benchmarking itself.';

export interface BenchOptions {
  turns?: number;
}

const echoTool: Tool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  readOnly: true,
  execute: async (args) => String(args.text),
};

/** A tool call for a fresh question, the answer once a tool result came back: two calls per turn. */
function respond(req: RecordedRequest): Step {
  const messages = Array.isArray(req.body.messages) ? (req.body.messages as Record<string, unknown>[]) : [];
  return messages.at(-1)?.role === 'tool'
    ? { text: 'The tool said hello.', usage: { input: 60, output: 6 } }
    : { toolCalls: [{ name: 'echo', arguments: '{"text":"hello"}' }], usage: { input: 50, output: 8 } };
}

/** The two requests of one turn, as the loop sends them, for the baselines. */
function turnRequests(): ChatMessage[][] {
  const user: ChatMessage = { role: 'user', content: 'Say hello through the tool.' };
  const call: ChatMessage = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"text":"hello"}' } }],
  };
  const result: ChatMessage = { role: 'tool', content: 'hello', tool_call_id: 'call_1', tool_name: 'echo' };
  return [[user], [user, call, result]];
}

async function timePerCall(calls: number, run: () => Promise<number>): Promise<number> {
  const started = performance.now();
  let made = 0;
  while (made < calls) made += await run();
  return (performance.now() - started) / made;
}

export async function benchAgentLoop(opts: BenchOptions = {}): Promise<Record<string, number>> {
  const turns = opts.turns ?? DEFAULT_TURNS;
  const fake = await startFakeOpenAI({ apiKey: API_KEY });
  fake.respondWith(respond);
  try {
    const client = new OpenAI({ apiKey: API_KEY, baseURL: fake.url, maxRetries: 0 });
    const provider: Provider = createProvider({ provider: 'openai', model: MODEL, apiKey: API_KEY, baseUrl: fake.url });
    const { name, description, parameters } = echoTool;
    const tools = [{ type: 'function' as const, function: { name, description, parameters } }];
    const requests = turnRequests();

    const rawTurn = async (): Promise<number> => {
      for (const messages of requests) {
        const stream = await client.chat.completions.create({
          model: MODEL,
          messages: [{ role: 'system', content: SYSTEM_PROMPT }, ...toWire(messages)],
          tools,
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of stream) void chunk;
      }
      return requests.length;
    };
    const providerTurn = async (): Promise<number> => {
      for (const messages of requests) {
        await provider.complete({
          systemPrompt: SYSTEM_PROMPT,
          messages,
          tools: [echoTool],
          signal: new AbortController().signal,
        });
      }
      return requests.length;
    };
    const loopTurn = async (): Promise<number> => {
      const result = await runConversation({
        userMessage: 'Say hello through the tool.',
        history: [],
        systemPrompt: SYSTEM_PROMPT,
        provider,
        tools: [echoTool],
      });
      if (!result.completed) throw new Error(`bench turn did not complete: ${result.partial ?? 'unknown reason'}`);
      return result.apiCalls;
    };

    // Warm up the JIT and the HTTP keep-alive pool before measuring anything.
    for (const run of [rawTurn, providerTurn, loopTurn]) await timePerCall(WARMUP_TURNS * 2, run);

    // Interleaved rounds and the median per variant, so JIT drift and GC pauses do not favour whichever runs last.
    const callsPerRound = Math.max(2, Math.round((turns * 2) / ROUNDS));
    const samples = { raw: [] as number[], provider: [] as number[], loop: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      samples.raw.push(await timePerCall(callsPerRound, rawTurn));
      samples.provider.push(await timePerCall(callsPerRound, providerTurn));
      samples.loop.push(await timePerCall(callsPerRound, loopTurn));
    }
    const calls = callsPerRound * ROUNDS;
    const rawSdkMsPerCall = median(samples.raw);
    const providerMsPerCall = median(samples.provider);
    const loopMsPerCall = median(samples.loop);
    const figures = {
      turns,
      apiCalls: calls,
      rawSdkMsPerCall: round(rawSdkMsPerCall),
      providerMsPerCall: round(providerMsPerCall),
      loopMsPerCall: round(loopMsPerCall),
      providerOverheadMsPerCall: round(providerMsPerCall - rawSdkMsPerCall),
      loopOverheadMsPerCall: round(loopMsPerCall - rawSdkMsPerCall),
      /** The loop alone: sanitising, events, tool execution, bookkeeping (provider conversion excluded). */
      loopOverProviderMsPerCall: round(loopMsPerCall - providerMsPerCall),
    };
    console.log('agent loop, per API call (ms), zero-latency OpenAI stand-in:');
    console.table(figures);
    return figures;
  } finally {
    await fake.close();
  }
}

/** The internal messages in Chat Completions form, for the raw SDK baseline. */
function toWire(messages: ChatMessage[]): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  return messages.map((m): OpenAI.Chat.Completions.ChatCompletionMessageParam => {
    if (m.role === 'tool') return { role: 'tool', content: m.content ?? '', tool_call_id: m.tool_call_id ?? '' };
    if (m.role === 'assistant') return { role: 'assistant', content: m.content, tool_calls: m.tool_calls };
    return { role: 'user', content: m.content ?? '' };
  });
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchAgentLoop().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
