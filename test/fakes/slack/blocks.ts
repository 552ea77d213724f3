/**
 * Block Kit in the Slack stand-in: the blocks chat.postMessage takes (checked as Slack does for the parts Herald
 * uses) and chat.postEphemeral, which answers a button press for one user only.
 */

/** chat.postEphemeral: a message only `user` sees. */
export interface EphemeralRecord {
  channel: string;
  user: string;
  text: string;
  threadTs?: string;
}

/**
 * Blocks as Slack checks them (the parts Herald uses): a JSON list, a section's text at most 3000 characters, an
 * actions block of 1-25 buttons with plain_text text of at most 75 characters, unique action_ids, values of at
 * most 2000 characters. An error code string when invalid.
 */
export function blocksOf(raw: unknown): unknown[] | undefined | string {
  if (raw === undefined) return undefined;
  let blocks: unknown = raw;
  if (typeof raw === 'string') {
    try {
      blocks = JSON.parse(raw);
    } catch {
      return 'invalid_blocks_format';
    }
  }
  if (!Array.isArray(blocks)) return 'invalid_blocks_format';
  const actionIds = new Set<string>();
  for (const b of blocks as Array<Record<string, unknown>>) {
    if (b.type === 'section') {
      const text = (b.text as { text?: unknown } | undefined)?.text;
      if (typeof text !== 'string' || text.length < 1 || text.length > 3000) return 'invalid_blocks';
    } else if (b.type === 'actions') {
      const elements = Array.isArray(b.elements) ? (b.elements as Array<Record<string, unknown>>) : [];
      if (elements.length < 1 || elements.length > 25) return 'invalid_blocks';
      for (const e of elements) {
        const text = e.text as { type?: unknown; text?: unknown } | undefined;
        const id = e.action_id;
        if (e.type !== 'button' || text?.type !== 'plain_text' || typeof text.text !== 'string' || text.text.length > 75) return 'invalid_blocks';
        if (typeof id !== 'string' || actionIds.has(id) || (typeof e.value === 'string' && e.value.length > 2000)) return 'invalid_blocks';
        actionIds.add(id);
      }
    } else {
      return 'invalid_blocks';
    }
  }
  return blocks;
}

/** chat.postEphemeral's arguments → what to record, or Slack's error code. */
export function ephemeralOf(args: Record<string, unknown>): EphemeralRecord | string {
  const str = (key: string): string | undefined => (typeof args[key] === 'string' && args[key] !== '' ? (args[key] as string) : undefined);
  const channel = str('channel');
  const user = str('user');
  const text = str('text');
  if (channel === undefined || !/^[CDG][A-Z0-9]+$/.test(channel)) return 'channel_not_found';
  if (user === undefined) return 'user_not_in_channel';
  if (text === undefined) return 'no_text';
  const threadTs = str('thread_ts');
  return { channel, user, text, ...(threadTs !== undefined && { threadTs }) };
}

/** views.publish: the App Home view a user sees. */
export interface HomeViewRecord {
  userId: string;
  view: Record<string, unknown>;
}

/** views.publish's arguments → what to record, or Slack's error code (a JSON `view` of type home, 1-100 blocks). */
export function homeViewOf(args: Record<string, unknown>): HomeViewRecord | string {
  const userId = typeof args.user_id === 'string' && args.user_id !== '' ? args.user_id : undefined;
  if (userId === undefined) return 'invalid_arguments';
  let view: unknown = args.view;
  if (typeof view === 'string') {
    try {
      view = JSON.parse(view);
    } catch {
      return 'invalid_arguments';
    }
  }
  if (typeof view !== 'object' || view === null || Array.isArray(view)) return 'invalid_arguments';
  const v = view as Record<string, unknown>;
  if (v.type !== 'home' || !Array.isArray(v.blocks) || v.blocks.length < 1 || v.blocks.length > 100) return 'invalid_arguments';
  return { userId, view: v };
}
