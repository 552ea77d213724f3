/** Account routes: versions, whoami, filters, profiles, account data, capabilities and push rules. */
import { randomBytes } from 'node:crypto';
import type { Ctx, Route } from './http.js';
import type { JsonObject } from './types.js';
import { MatrixError, type World } from './world.js';

const C = '^/_matrix/client/(?:v3|r0)';
const SEG = '([^/]+)';
const re = (path: string): RegExp => new RegExp(`${C}${path}$`);

/** Spec versions this server says it speaks (v1.11 brought authenticated media). */
const VERSIONS = ['r0.6.1', 'v1.1', 'v1.2', 'v1.3', 'v1.4', 'v1.5', 'v1.6', 'v1.7', 'v1.8', 'v1.9', 'v1.10', 'v1.11', 'v1.12'];

export function clientRoutes(world: World, deviceId: string): Route[] {
  const self = (userId: string, what: string) => {
    if (userId !== world.botId) throw new MatrixError(403, 'M_FORBIDDEN', `Cannot ${what} for other users`);
  };

  const postFilter = async (ctx: Ctx) => {
    self(ctx.params[0], 'create filters');
    const filter = await ctx.json();
    const id = String(world.filters.size + 1);
    world.filters.set(id, filter);
    return { filter_id: id };
  };

  const getFilter = (ctx: Ctx) => {
    self(ctx.params[0], 'get filters');
    const filter = world.filters.get(ctx.params[1]);
    if (!filter) throw new MatrixError(404, 'M_NOT_FOUND', 'No such filter');
    return filter;
  };

  const profile = (ctx: Ctx) => {
    const [userId, field] = ctx.params;
    if (!/^@[^:]+:.+$/.test(userId)) throw new MatrixError(400, 'M_INVALID_PARAM', 'Invalid user id');
    const p = world.profiles.get(userId);
    if (!p) throw new MatrixError(404, 'M_NOT_FOUND', 'Profile was not found');
    const out: JsonObject = {};
    if (p.displayname !== undefined) out.displayname = p.displayname;
    if (p.avatar_url !== undefined) out.avatar_url = p.avatar_url;
    if (field === undefined) return out;
    if (out[field] === undefined) throw new MatrixError(404, 'M_NOT_FOUND', `The requested profile field was not found`);
    return { [field]: out[field] };
  };

  const setDisplayName = async (ctx: Ctx) => {
    self(ctx.params[0], 'set the display name');
    const body = await ctx.json();
    if (typeof body.displayname !== 'string') throw new MatrixError(400, 'M_BAD_JSON', "'displayname' must be a string");
    world.profile(world.botId).displayname = body.displayname;
    return {};
  };

  const getAccountData = (ctx: Ctx) => {
    self(ctx.params[0], 'get account data');
    const data = world.accountData.get(ctx.params[1]);
    if (!data) throw new MatrixError(404, 'M_NOT_FOUND', 'Account data not found');
    return data.content;
  };

  const putAccountData = async (ctx: Ctx) => {
    self(ctx.params[0], 'add account data');
    world.setAccountData(ctx.params[1], await ctx.json());
    return {};
  };

  return [
    { method: 'GET', pattern: /^\/_matrix\/client\/versions$/, handler: () => ({ versions: VERSIONS, unstable_features: {} }), public: true },
    { method: 'GET', pattern: re('/account/whoami'), handler: () => ({ user_id: world.botId, device_id: deviceId, is_guest: false }) },
    { method: 'POST', pattern: re(`/user/${SEG}/filter`), handler: postFilter },
    { method: 'GET', pattern: re(`/user/${SEG}/filter/${SEG}`), handler: getFilter },
    { method: 'GET', pattern: re(`/profile/${SEG}(?:/(displayname|avatar_url))?`), handler: profile },
    { method: 'PUT', pattern: re(`/profile/${SEG}/displayname`), handler: setDisplayName },
    { method: 'GET', pattern: re(`/user/${SEG}/account_data/${SEG}`), handler: getAccountData },
    { method: 'PUT', pattern: re(`/user/${SEG}/account_data/${SEG}`), handler: putAccountData },
    {
      method: 'GET',
      pattern: re('/capabilities'),
      handler: () => ({ capabilities: { 'm.change_password': { enabled: false }, 'm.room_versions': { default: '10', available: { '10': 'stable' } } } }),
    },
    { method: 'GET', pattern: re('/pushrules/?'), handler: () => ({ global: { override: [], underride: [], sender: [], room: [], content: [] } }) },
  ];
}

/** A new access token in Synapse's shape. */
export const newToken = (): string => `syt_${randomBytes(6).toString('base64url')}_${randomBytes(15).toString('base64url')}`;
