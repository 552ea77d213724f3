/**
 * Stage 7 — review, behind the reply (Hermes' post-turn nudges): after every N turns of a conversation (a profile's
 * `review`, else HERALD_REVIEW, HERALD_REVIEW_EVERY_TURNS), the side-task model reads those turns and proposes memory
 * notes and skill edits (features/llm/post-turn-review.ts). Notes are saved at once (`apply: auto`) or offered to
 * the user with one button each, which stands for `/remember …` (the text fallback: typing it does the same). Skill
 * edits go to the SkillEditSink: written to the profile's skills at once, or offered with a button standing for
 * `/skills save <name>` and the skill's text. Settle starts it once the reply was delivered and never waits for it; the call is
 * priced into the session's spend and its person's budgets like the memory flush of /new (turn/outside-spend.ts).
 *
 * Once per turn: settle runs once for a delivered turn (a re-run after a crash finds the outbox row delivered and
 * skips every stage), so a review never runs twice. A worker that dies during the review loses it (nothing is
 * retried; the next review, N turns later, reads its own turns), and saving a note twice keeps one copy.
 */
import { MemoryEditError, MemoryStore, renderMemoryBlock, type ChatMessage, type Session } from '@herald/agent-core';
import { deliver } from '../../out/send-reply.js';
import { memoryKeyOf, type Profile } from '../../features/profiles/table.js';
import { reviewConversation, reviewDue, type NoteProposal, type ReviewProposals } from '../../features/llm/post-turn-review.js';
import type { Logger } from '../../support/logger.js';
import { spendOutsideTurn } from '../outside-spend.js';
import { offersMemory } from '../tools.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';

/** A review is one call; past this it is abandoned. */
const REVIEW_TIMEOUT_MS = 60_000;
/** Offered notes stay pressable this long. */
const OFFER_TTL_MS = 7 * 24 * 60 * 60_000;
export const OFFER_HEADING = '💡 Worth remembering from our conversation?';

export interface ReviewInput {
  /** The session the turn ended in, and the history before the turn (its user messages count the turns). */
  session: Session;
  history: readonly ChatMessage[];
}

/** Starts the review when this turn is one it runs after; returns at once (the review is tracked as background work). */
export function reviewInBackground(deps: TurnDeps, open: OpenTurn, input: ReviewInput): void {
  const { first, ctx } = open;
  const profile = deps.conversation.profiles.get(input.session.profile);
  const settings = profile.review;
  // Nobody to learn about in a scheduled run; an API client gets no buttons and no follow-up message.
  if (!settings.enabled || first.scheduled || first.platform === 'api') return;
  const turnNumber = input.history.filter((m) => m.role === 'user').length + 1;
  if (!reviewDue(turnNumber, settings.everyTurns)) return;
  const log = ctx.log.child({ stage: 'review' });
  deps.conversation.background.track(runReview(deps, open, profile, input.session, log));
}

async function runReview(deps: TurnDeps, open: OpenTurn, profile: Profile, session: Session, log: Logger): Promise<void> {
  const { store, conversation } = deps;
  const side = conversation.sideTasks.forSession(session.model ?? profile.model ?? null, 'compression');
  if (!side) return;
  const withNotes = offersMemory(profile.toolsets);
  // The person whose turn it was: the offer's buttons are theirs, and so are the notes (a shared thread has several).
  const userKey = memoryKeyOf(profile, open.first.platform, open.first.userId);
  const { spend, meter } = spendOutsideTurn(store, conversation, session);
  try {
    const history = await store.getHistory(session.id);
    const proposals = await reviewConversation({
      provider: meter.provider(side),
      messages: lastTurns(history, profile.review.everyTurns),
      savedNotes: withNotes ? renderMemoryBlock(await new MemoryStore(store).snapshot(userKey)) : null,
      signal: AbortSignal.timeout(REVIEW_TIMEOUT_MS),
    });
    log.info({ sessionId: session.id, notes: proposals.notes.length, skills: proposals.skills.length }, 'post-turn review done');
    await actOn(deps, open, profile, userKey, withNotes ? proposals : { ...proposals, notes: [] }, log);
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err), sessionId: session.id }, 'post-turn review failed');
  } finally {
    await spend.settle().catch((err: unknown) => log.warn({ err, sessionId: session.id }, 'the review ran but its spend could not be recorded'));
  }
}

/** Saves or offers the notes, hands the skill edits over, and tells the user what there is to tell. */
async function actOn(deps: TurnDeps, open: OpenTurn, profile: Profile, userKey: string, proposals: ReviewProposals, log: Logger): Promise<void> {
  const skillLines: string[] = [];
  const skillChoices: Array<{ label: string; text: string }> = [];
  for (const edit of proposals.skills) {
    const outcome = await deps.review.skillEdits.propose(profile.name, edit, profile.review.apply);
    if (outcome) skillLines.push(outcome.line);
    if (outcome?.choice) skillChoices.push(outcome.choice);
  }
  if (profile.review.apply === 'auto') {
    const saved = await saveNotes(new MemoryStore(deps.store), userKey, proposals.notes, log);
    if (saved > 0) log.info({ saved }, 'post-turn review saved notes');
    if (skillLines.length > 0) await tell(deps, open, skillLines.join('\n'), []);
    return;
  }
  if (proposals.notes.length === 0 && skillLines.length === 0) return;
  const lines = proposals.notes.map((n, i) => `${i + 1}. ${n.content}${n.target === 'user' ? ' (about you)' : ''}`);
  const text = [
    ...(lines.length > 0 ? [OFFER_HEADING, ...lines, 'Press a button to save one, or send /remember <note> (/remember user <note> for one about you).'] : []),
    ...skillLines,
  ].join('\n');
  const choices = [...proposals.notes.map((n, i) => ({ label: `💾 Save ${i + 1}`, text: rememberText(n) })), ...skillChoices];
  await tell(deps, open, text, choices);
}

/** The command a note's button stands for (edges/commands/remember.ts). */
export function rememberText(note: NoteProposal): string {
  return `/remember ${note.target} ${note.content}`;
}

async function saveNotes(memory: MemoryStore, userKey: string, notes: readonly NoteProposal[], log: Logger): Promise<number> {
  let saved = 0;
  for (const note of notes) {
    try {
      await memory.add(userKey, note.target, note.content);
      saved += 1;
    } catch (err) {
      // A full part: the note is dropped (the model's own memory tool consolidates; the review does not).
      if (err instanceof MemoryEditError) log.info({ reason: err.message }, 'post-turn review note not saved');
      else throw err;
    }
  }
  return saved;
}

async function tell(deps: TurnDeps, open: OpenTurn, text: string, choices: Array<{ label: string; text: string }>): Promise<void> {
  const { first, egress } = open;
  const offered = choices.length > 0 ? await deps.review.buttons.offer({ userId: first.userId, choices, once: false }, OFFER_TTL_MS) : null;
  await deliver(egress, first.conversationId, text, { buttons: offered?.buttons });
}

/** The messages of the last `turns` turns: from the `turns`-th last user message on. */
export function lastTurns(history: readonly ChatMessage[], turns: number): ChatMessage[] {
  let seen = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].role === 'user' && ++seen === turns) return history.slice(i);
  }
  return [...history];
}
