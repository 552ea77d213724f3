/**
 * OpenRouter's `reasoning_details`: the structured, possibly signed or encrypted reasoning of the model behind it
 * (`reasoning.text` with a `signature`, `reasoning.summary`, `reasoning.encrypted`). OpenRouter asks for them back,
 * unmodified, on the assistant message in later requests; a Claude behind it refuses a tool loop without its signed
 * thinking. Streamed, they come in pieces that share an `index`, folded here into whole details.
 */
import type { ReasoningDetail } from '../base/types.js';

/** `reasoning_details` format of OpenRouter's details (the `data` is one detail as the server sent it). */
const OPENROUTER_REASONING_FORMAT = 'openrouter';

type Detail = Record<string, unknown>;
/** The fields a streamed piece continues; every other field is taken as given. */
const CONCATENATED = ['text', 'summary', 'data'] as const;

export class ReasoningDetailsAccumulator {
  private readonly details: Detail[] = [];

  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) return;
    for (const piece of pieces) {
      if (typeof piece !== 'object' || piece === null) continue;
      const incoming = piece as Detail;
      const same = this.details.find((d) => d.index !== undefined && d.index === incoming.index && d.type === incoming.type);
      if (same) merge(same, incoming);
      else this.details.push({ ...incoming });
    }
  }

  /** The details for the message, tagged with the model they belong to (they go back to that model only). */
  result(model: string): ReasoningDetail[] {
    return this.details.map((data) => ({ format: OPENROUTER_REASONING_FORMAT, model, data }));
  }
}

function merge(into: Detail, piece: Detail): void {
  for (const [key, value] of Object.entries(piece)) {
    if ((CONCATENATED as readonly string[]).includes(key) && typeof value === 'string') into[key] = String(into[key] ?? '') + value;
    else if (value !== undefined && value !== null && value !== '') into[key] = value;
  }
}

/** The details to send back with an assistant message to `model`: those it wrote itself. */
export function replayedDetails(details: readonly ReasoningDetail[] | undefined, model: string): Detail[] {
  return (details ?? []).filter((d) => d.format === OPENROUTER_REASONING_FORMAT && d.model === model).map((d) => d.data);
}
