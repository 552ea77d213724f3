/**
 * The internal message format (DESIGN.md): OpenAI-style, provider adapters convert at the edge.
 * Everything here is plain JSON so it survives SQLite and Redis round trips.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /**
   * What a server attached to the call for itself and wants back with it (Gemini's
   * `{ google: { thought_signature } }`, which Gemini 3 requires on the tool history).
   */
  extra_content?: Record<string, unknown>;
}

/**
 * A file a user sent, as the history keeps it: where it lives on its platform and what it is, never its bytes.
 * What was read from it (a transcript, a document's text, an image description) is in the message's content.
 */
export interface AttachmentRef {
  platform: string;
  /** The platform's own id of the file (Telegram file_id, Discord attachment id, Slack file id). */
  fileId: string;
  /** What a worker fetches it with (Telegram `tg-file:<file_id>`, the Discord CDN URL, Slack `url_private`); never a URL with a token in it. */
  url: string;
  kind: 'image' | 'audio' | 'video' | 'file';
  mimeType?: string;
  size?: number;
  name?: string;
}

/** An image's bytes for the request being built (base64). Never stored: the history keeps the AttachmentRef. */
export interface ImageInput {
  mimeType: string;
  /** Base64, no `data:` prefix. */
  data: string;
  /** Shown to a model that cannot see it ("photo.jpg"). */
  name?: string;
}

export interface ChatMessage {
  role: Role;
  content: string | null;
  /** User messages: the files the user sent with it (stored with the message). */
  attachments?: AttachmentRef[];
  /** User messages and tool results of the current turn: images to show the model (sent, never stored). */
  images?: ImageInput[];
  /**
   * The latest user message of a request: where per-request text appended to `content` begins (the saved notes,
   * B7; sent, never stored). What comes before it is the person's own text, the same bytes the next turn sends, so
   * providers with explicit cache breakpoints end that part with one.
   */
  requestContextAt?: number;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  tool_name?: string;
  reasoning?: string;
  /**
   * Provider-opaque reasoning state the API needs back on later calls (the Responses API's encrypted reasoning
   * items). Never shown to users; replayed only to the same format and model.
   */
  reasoning_details?: ReasoningDetail[];
  finish_reason?: string;
}

export interface ReasoningDetail {
  /** Who can read it back, e.g. `openai-responses`. */
  format: string;
  /** The model that produced it: encrypted reasoning is only replayed to the model that wrote it. */
  model?: string;
  data: Record<string, unknown>;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** What the provider itself said the call cost (OpenRouter's `usage.cost`); absent when it said nothing. */
  reportedCostUsd?: number;
}

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** Adds `add` into `total`, field by field. */
export function addUsageInto(total: Usage, add: Usage): void {
  total.input += add.input;
  total.output += add.output;
  total.cacheRead += add.cacheRead;
  total.cacheWrite += add.cacheWrite;
  if (add.reportedCostUsd !== undefined) total.reportedCostUsd = (total.reportedCostUsd ?? 0) + add.reportedCostUsd;
}

/** `a` less `b`, field by field. */
export function usageMinus(a: Usage, b: Usage): Usage {
  return { input: a.input - b.input, output: a.output - b.output, cacheRead: a.cacheRead - b.cacheRead, cacheWrite: a.cacheWrite - b.cacheWrite };
}

/** Where a session came from (sessions.source). */
export type SessionSource = 'telegram' | 'discord' | 'slack' | 'whatsapp' | 'matrix' | 'cli' | 'api';
