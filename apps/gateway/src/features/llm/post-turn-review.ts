/**
 * The review after a turn (Hermes' background memory and skill nudges): behind a delivered reply, every N turns of a
 * conversation, the side-task model reads the turns just finished and proposes what is worth keeping — notes for
 * the memory tool's store (facts about the person or the work) and skill edits (a procedure that worked, written as
 * a skill). It only proposes: turn/stages/review.ts applies the notes or offers them to the user, and hands the
 * skill edits to a SkillEditSink. One model call with two proposal tools; nothing runs but parsing.
 */
import { MEMORY_CHAR_LIMITS, recordOr, stripMemoryBlock, type ChatMessage, type MemoryTarget, type Provider } from '@herald/agent-core';

export const PROPOSE_NOTE_TOOL = 'propose_memory_note';
export const PROPOSE_SKILL_TOOL = 'propose_skill_edit';

export const REVIEW_SYSTEM_PROMPT = [
  'You review a conversation an assistant just had, to help it learn. Propose, with the tools, only what will still',
  'be useful in later conversations:',
  `- ${PROPOSE_NOTE_TOOL}: a durable fact about the user (target "user": name, preferences, habits) or about their`,
  '  work (target "memory": environment, conventions, lessons). One short sentence each; never what is already saved,',
  '  never the progress of the current task, never secrets.',
  `- ${PROPOSE_SKILL_TOOL}: a reusable procedure that worked and took effort (several steps or tools), as a skill:`,
  '  a short kebab-case name and a SKILL.md body (front matter with name and description, then the steps).',
  'Propose nothing when nothing qualifies, and then answer "nothing to propose". Do not answer anything else.',
].join('\n');

/** Room for a few proposals, a skill body among them. */
const REVIEW_MAX_TOKENS = 2_048;
/** A skill body past this is cut from the proposal (a sink may have its own cap). */
const SKILL_MAX_CHARS = 8_000;
/** At most this many proposals of each kind from one review. */
const MAX_PROPOSALS = 5;
const SKILL_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface NoteProposal {
  target: MemoryTarget;
  content: string;
}

export interface SkillProposal {
  name: string;
  content: string;
  /** Why the reviewer proposes it (one line, shown with the proposal). */
  reason: string;
}

export interface ReviewProposals {
  notes: NoteProposal[];
  skills: SkillProposal[];
}

/** What became of one proposed skill edit: a line for the user, and (offered) the button that saves it. */
export interface SkillEditOutcome {
  line: string;
  choice?: { label: string; text: string };
}

/**
 * Where the review's skill edits go: the skills store (features/skills/review-edits.ts), which validates, caps and
 * writes into the profile's own skills — at once (`apply: auto`) or when the user presses the offered button.
 */
export interface SkillEditSink {
  /** Takes one proposed edit of `profile`'s skills; returns what to tell the user about it, or null. */
  propose(profile: string, edit: SkillProposal, apply: 'auto' | 'offer'): Promise<SkillEditOutcome | null>;
}

/** Whether this turn of the conversation (1 = its first) is one the review runs after. */
export function reviewDue(turnNumber: number, everyTurns: number): boolean {
  return turnNumber > 0 && turnNumber % everyTurns === 0;
}

const TOOLS = [
  {
    name: PROPOSE_NOTE_TOOL,
    description: 'Propose one note to keep for later conversations with this user.',
    parameters: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: ['user', 'memory'], description: 'user: about the person; memory: about their work' },
        content: { type: 'string', description: 'The note: one short sentence.' },
      },
      required: ['target', 'content'],
    },
  },
  {
    name: PROPOSE_SKILL_TOOL,
    description: 'Propose creating or rewriting a skill (a reusable procedure) from what worked in this conversation.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'kebab-case, e.g. deploy-preview' },
        content: { type: 'string', description: 'The whole SKILL.md: front matter (name, description), then Markdown.' },
        reason: { type: 'string', description: 'One line: what it helps with.' },
      },
      required: ['name', 'content'],
    },
  },
];

export interface ReviewInput {
  provider: Provider;
  /** The turns to review, oldest first (no system message). */
  messages: readonly ChatMessage[];
  /** The notes saved already, as the memory block shows them (null: none). */
  savedNotes: string | null;
  signal: AbortSignal;
}

/** One side-task call; the proposals it made, checked and capped. Rejects when the call fails. */
export async function reviewConversation(input: ReviewInput): Promise<ReviewProposals> {
  const transcript = input.messages
    .map(line)
    .filter((l) => l !== '')
    .join('\n\n');
  const saved = input.savedNotes ? `Already saved:\n${input.savedNotes}` : 'Nothing is saved yet.';
  const reply = await input.provider.complete({
    systemPrompt: REVIEW_SYSTEM_PROMPT,
    messages: [{ role: 'user', content: `${saved}\n\nThe conversation:\n${transcript}` }],
    tools: TOOLS,
    maxTokens: REVIEW_MAX_TOKENS,
    signal: input.signal,
  });
  const proposals: ReviewProposals = { notes: [], skills: [] };
  for (const call of reply.message.tool_calls ?? []) {
    const args = parseArgs(call.function.arguments);
    if (call.function.name === PROPOSE_NOTE_TOOL) {
      const note = noteOf(args);
      if (note && proposals.notes.length < MAX_PROPOSALS && !proposals.notes.some((n) => n.content === note.content)) proposals.notes.push(note);
    } else if (call.function.name === PROPOSE_SKILL_TOOL) {
      const skill = skillOf(args);
      if (skill && proposals.skills.length < MAX_PROPOSALS) proposals.skills.push(skill);
    }
  }
  return proposals;
}

/** A message as the reviewer reads it: who said what, tool calls by name. The memory block is left out. */
function line(m: ChatMessage): string {
  const text = m.content ?? '';
  if (m.role === 'user') return `User: ${stripMemoryBlock(text)}`;
  if (m.role === 'tool') return `Tool ${m.tool_name ?? ''} result: ${text.slice(0, 500)}`;
  const calls = (m.tool_calls ?? []).map((c) => `[calls ${c.function.name} ${c.function.arguments.slice(0, 200)}]`).join(' ');
  return [text.trim() && `Assistant: ${text}`, calls].filter(Boolean).join(' ');
}

function parseArgs(raw: string): Record<string, unknown> {
  try {
    return recordOr(JSON.parse(raw));
  } catch {
    return {};
  }
}

function noteOf(args: Record<string, unknown>): NoteProposal | null {
  const target = args.target === 'user' || args.target === 'memory' ? args.target : null;
  const content = typeof args.content === 'string' ? args.content.replace(/\s+/g, ' ').trim() : '';
  if (!target || content === '' || content.length > MEMORY_CHAR_LIMITS[target] / 4) return null;
  return { target, content };
}

function skillOf(args: Record<string, unknown>): SkillProposal | null {
  const name = typeof args.name === 'string' ? args.name.trim().toLowerCase() : '';
  const content = typeof args.content === 'string' ? args.content.trim() : '';
  if (!SKILL_NAME.test(name) || content === '') return null;
  const reason = typeof args.reason === 'string' ? args.reason.replace(/\s+/g, ' ').trim().slice(0, 200) : '';
  return { name, content: content.slice(0, SKILL_MAX_CHARS), reason };
}

/**
 * A sink that keeps nothing (a test's, or a gateway whose skills cannot be written): each proposed edit is logged
 * (name, size, reason; its body at debug) and shown to the user as one line.
 */
export class LoggedSkillEdits implements SkillEditSink {
  constructor(private readonly log: { info: (obj: object, msg: string) => void; debug: (obj: object, msg: string) => void }) {}

  async propose(profile: string, edit: SkillProposal): Promise<SkillEditOutcome | null> {
    this.log.info({ profile, skill: edit.name, chars: edit.content.length, reason: edit.reason }, 'skill edit proposed by the review (not stored)');
    this.log.debug({ profile, skill: edit.name, content: edit.content }, 'proposed skill body');
    return { line: `📚 Skill idea "${edit.name}"${edit.reason ? `: ${edit.reason}` : ''} (not saved).` };
  }
}
