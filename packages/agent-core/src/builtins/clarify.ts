/**
 * The `clarify` tool: asks the user a question and waits for the answer, through the `ClarifyChannel` the caller
 * puts in toolContext (the gateway sends it to the chat and takes the user's next message as the answer).
 * Interactive, so the loop never runs it in parallel with anything. Unanswered questions time out and the
 * model is told to carry on with a stated assumption.
 */
import type { Tool } from '../tools/registry.js';
import { ToolInputError, clarifyOf, stringArg } from './context.js';

export const CLARIFY_TOOL = 'clarify';
export const DEFAULT_CLARIFY_TIMEOUT_MS = 300_000;
export const MAX_CLARIFY_CHOICES = 4;

class ClarifyTimeoutError extends Error {
  override name = 'ClarifyTimeoutError';
}

/** The question as the user sees it: the choices numbered under it. */
function formatQuestion(question: string, choices: readonly string[]): string {
  if (choices.length === 0) return question.trim();
  return [question.trim(), '', ...choices.map((c, i) => `${i + 1}. ${c}`)].join('\n');
}

/** "2" answers with the second choice; anything else is the user's own words. */
function resolveAnswer(answer: string, choices: readonly string[]): string {
  const n = /^\s*(\d+)[.)]?\s*$/.exec(answer);
  const index = n ? Number(n[1]) - 1 : -1;
  return index >= 0 && index < choices.length ? choices[index] : answer.trim();
}

/** "5 minutes", "30 seconds". */
function duration(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.round(seconds / 60)} minutes`;
}

function choicesArg(args: Record<string, unknown>): string[] {
  const raw = args.choices;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || !raw.every((c): c is string => typeof c === 'string')) {
    throw new ToolInputError('"choices" must be a list of strings');
  }
  const choices = raw.map((c) => c.trim()).filter(Boolean);
  if (choices.length > MAX_CLARIFY_CHOICES) throw new ToolInputError(`give at most ${MAX_CLARIFY_CHOICES} choices`);
  return choices;
}

export function createClarifyTool(opts: { timeoutMs?: number } = {}): Tool {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CLARIFY_TIMEOUT_MS;
  return {
    name: CLARIFY_TOOL,
    description:
      'Ask the user a question and wait for the answer, when you cannot go on without it (an ambiguous request, ' +
      'a choice only they can make). Ask one short question; offer up to ' +
      `${MAX_CLARIFY_CHOICES} choices when the likely answers are known. Do not use it for things you can find ` +
      `out yourself. If the user does not answer within ${duration(timeoutMs)}, ` +
      'carry on with your best assumption and say which one you made.',
    parameters: {
      type: 'object',
      properties: {
        question: { type: 'string' },
        choices: { type: 'array', items: { type: 'string' }, description: `Up to ${MAX_CLARIFY_CHOICES} suggested answers` },
      },
      required: ['question'],
    },
    readOnly: false,
    interactive: true,
    async execute(args, ctx) {
      const channel = clarifyOf(ctx);
      if (!channel) throw new Error('there is no way to ask the user a question here; make a reasonable assumption and say so');
      const choices = choicesArg(args);
      const question = formatQuestion(stringArg(args, 'question'), choices);
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(new ClarifyTimeoutError('no answer in time')), timeoutMs);
      try {
        const answer = await channel.ask(question, AbortSignal.any([ctx.signal, timer.signal]), choices);
        return `The user answered: ${resolveAnswer(answer, choices)}`;
      } catch (err) {
        // The turn itself was aborted: let the loop record it as cancelled.
        if (ctx.signal.aborted) throw err;
        if (timer.signal.aborted) {
          return `The user did not answer within ${duration(timeoutMs)}. Carry on with your best assumption and tell the user which one you made.`;
        }
        throw err;
      } finally {
        clearTimeout(timeout);
      }
    },
  };
}
