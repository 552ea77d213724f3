/**
 * An OpenAI stand-in script for the clarify tool: "book …" asks "For how many people?" with the choices 2 and 4,
 * then answers with what the tool returned ("Booked. (The user answered: 4)"); "stream …" does the same after
 * streaming a sentence first; anything else is echoed ("ok: …").
 */
import type { RecordedRequest, Step } from '../fakes/llm/index.js';
import { lastUserText } from './llm-tags.js';

interface WireMessage {
  role: string;
  content: string | null;
}

export const CLARIFY_QUESTION = 'For how many people?';
/** "stream …": text streamed before the question (a preview to see while the turn waits), then the final answer. */
export const STREAMED_BEFORE_QUESTION = 'Let me check the calendar first.';
export const STREAMED_ANSWER = 'All set for Friday.';

export function clarifyScript(req: RecordedRequest): Step {
  const messages = (req.body.messages ?? []) as WireMessage[];
  const text = lastUserText(req);
  const afterUser = messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1);
  const toolResult = afterUser.find((m) => m.role === 'tool')?.content;
  if (text.startsWith('stream')) {
    if (toolResult == null)
      return {
        text: STREAMED_BEFORE_QUESTION,
        toolCalls: [{ name: 'clarify', arguments: JSON.stringify({ question: CLARIFY_QUESTION, choices: ['2', '4'] }) }],
      };
    return { text: STREAMED_ANSWER };
  }
  if (text.startsWith('book')) {
    if (toolResult == null) return { toolCalls: [{ name: 'clarify', arguments: JSON.stringify({ question: CLARIFY_QUESTION, choices: ['2', '4'] }) }] };
    return { text: `Booked. (${toolResult})` };
  }
  return { text: `ok: ${text}` };
}
