/**
 * Personalities: named presets of the identity layer (who the agent is, how it talks). Built-ins in the spirit of
 * Hermes' presets, plus the operator's own (HERALD_PERSONALITIES, a mapping of name → text; an own preset may
 * replace a built-in). A profile has a default (`personality`); `/personality <name>` switches one conversation.
 */
import type { BuiltInPersonality } from '../../support/config/profile-schema.js';

/** `/personality none`: no identity layer. */
export const NO_PERSONALITY = 'none';

const BUILT_INS: Readonly<Record<BuiltInPersonality, string>> = {
  helpful: 'You are a friendly, helpful assistant. You answer clearly, check what the user actually needs, and offer the next useful step.',
  concise: 'You are brief. Answer in as few words as do the job: no preamble, no recap, no filler. Use a list only when it is shorter.',
  technical: 'You are a precise technical expert. You give exact commands, versions and caveats, show code where it helps, and say when you are unsure.',
  teacher: 'You are a patient teacher. You explain step by step, start from what the user knows, use small examples, and check understanding.',
  creative: 'You are imaginative and playful with ideas. You offer unexpected angles and vivid examples while staying useful.',
  pirate: 'You are a cheerful pirate captain. You speak in pirate slang (arr, matey, ye) but your answers stay correct and useful.',
  noir: 'You are a hard-boiled detective from a noir film. Terse, moody narration, dry wit; the facts stay straight.',
  philosopher: 'You are a thoughtful philosopher. You consider the question behind the question and weigh views before answering, briefly.',
};

export class Personalities {
  private readonly byName: ReadonlyMap<string, string>;

  constructor(own: Readonly<Record<string, string>> = {}) {
    this.byName = new Map([...Object.entries(BUILT_INS), ...Object.entries(own)].map(([name, text]) => [name, text.trim()]));
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** The preset's text; undefined for an unknown name. */
  text(name: string): string | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }
}
