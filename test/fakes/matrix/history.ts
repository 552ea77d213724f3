/**
 * GET /rooms/{roomId}/messages: paging through a room's history from a `prev_batch` (or a sync `next_batch`)
 * token, backwards or forwards, as far as the bot may see (history visibility).
 */
import type { Ctx, Route } from './http.js';
import { clientEvent, prevBatchToken, visibleFrom } from './sync.js';
import { MatrixError, type World } from './world.js';

const MAX_LIMIT = 100;

export function historyRoutes(world: World, nonce: string): Route[] {
  /** A token marks a point between two stream positions: the events at or before `pos` are behind it. */
  const pointOf = (token: string | null, dir: string): number => {
    if (token === null) return dir === 'b' ? world.pos : 0;
    const m = /^[st](\d+)_([0-9a-f]+)$/.exec(token);
    if (!m || m[2] !== nonce) throw new MatrixError(400, 'M_INVALID_PARAM', 'Invalid pagination token');
    return Number(m[1]);
  };

  const messages = (ctx: Ctx) => {
    const room = world.room(ctx.params[0]);
    const member = world.memberEvent(room, world.botId);
    const m = member?.event.content.membership;
    if (!member || (m !== 'join' && m !== 'leave')) throw new MatrixError(403, 'M_FORBIDDEN', `User ${world.botId} not in room ${room.id}`);
    const q = ctx.url.searchParams;
    const dir = q.get('dir') ?? 'b';
    if (dir !== 'b' && dir !== 'f') throw new MatrixError(400, 'M_INVALID_PARAM', "dir must be 'b' or 'f'");
    const limit = Math.min(Number(q.get('limit') ?? '10'), MAX_LIMIT);
    if (!Number.isInteger(limit) || limit < 0) throw new MatrixError(400, 'M_INVALID_PARAM', 'limit must be a non-negative integer');
    const point = pointOf(q.get('from'), dir);
    const from = visibleFrom(world, room, member.pos);
    // A bot that left sees up to its leave.
    const until = m === 'leave' ? member.pos : world.pos;
    const visible = room.events.filter((s) => s.pos >= from && s.pos <= until);
    const side = dir === 'b' ? visible.filter((s) => s.pos <= point).reverse() : visible.filter((s) => s.pos > point);
    const page = side.slice(0, limit);
    const last = page.at(-1);
    return {
      chunk: page.map((s) => clientEvent(s.event, world.botId, true)),
      start: prevBatchToken(point, nonce),
      ...(last && side.length > page.length && { end: prevBatchToken(dir === 'b' ? last.pos - 1 : last.pos, nonce) }),
    };
  };

  return [{ method: 'GET', pattern: /^\/_matrix\/client\/(?:v3|r0)\/rooms\/([^/]+)\/messages$/, handler: messages }];
}
