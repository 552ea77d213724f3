/**
 * `herald pairing list|approve|revoke`: the owner's side of pairing, on the same database the gateway uses,
 * so an approval takes effect on the user's next message without a restart.
 */
import { parseArgs } from 'node:util';
import { HERALD_COMMAND } from '../support/herald-command.js';
import { PairingService, UnknownPlatformNameError, parsePlatform } from '../features/pairing/index.js';
import { openConfiguredStore, type StoreConfig } from '../features/sessions/store-target.js';
import { CliError, type CliIo } from './io.js';

export const PAIRING_USAGE = `${HERALD_COMMAND} pairing list [--platform telegram|discord|slack] [--json]
${HERALD_COMMAND} pairing approve <platform> <code>
${HERALD_COMMAND} pairing revoke <platform> <user id>`;

export async function pairingCommand(args: string[], config: StoreConfig, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { platform: { type: 'string' }, json: { type: 'boolean' } },
  });
  const platformOf = (name: string | undefined) => {
    if (name === undefined) throw new CliError(`usage:\n${PAIRING_USAGE}`);
    try {
      return parsePlatform(name);
    } catch (err) {
      if (err instanceof UnknownPlatformNameError) throw new CliError(err.message);
      throw err;
    }
  };
  const store = await openConfiguredStore(config);
  const pairing = new PairingService(store.sql);
  try {
    switch (sub) {
      case 'list': {
        const { pending, approved } = await pairing.list(values.platform === undefined ? undefined : platformOf(values.platform));
        if (values.json) return io.json({ pending, approved });
        io.out(`pending (${pending.length}):`);
        for (const p of pending) io.out(`  ${p.platform}  ${p.userId}  ${p.userName ?? '-'}  expires ${new Date(p.expiresAt).toISOString()}`);
        io.out(`approved (${approved.length}):`);
        for (const a of approved) io.out(`  ${a.platform}  ${a.userId}  ${a.userName ?? '-'}  since ${new Date(a.approvedAt).toISOString()}`);
        return 0;
      }
      case 'approve': {
        const [name, code] = positionals;
        if (!code) throw new CliError(`usage: ${HERALD_COMMAND} pairing approve <platform> <code>`);
        const res = await pairing.approve(platformOf(name), code);
        if (res.status === 'approved') {
          io.out(`approved ${res.platform} user ${res.userId}${res.userName ? ` (${res.userName})` : ''}`);
          return 0;
        }
        if (res.status === 'invalid') {
          io.err(`no pending request with code ${code} on ${name} (wrong or expired); ${res.attemptsLeft} attempts left before pairing pauses`);
          return 1;
        }
        io.err(`pairing on ${name} is paused after too many wrong codes; try again in ${Math.ceil(res.retryAfterMs / 60_000)} min`);
        return 1;
      }
      case 'revoke': {
        const [name, userId] = positionals;
        if (!userId) throw new CliError(`usage: ${HERALD_COMMAND} pairing revoke <platform> <user id>`);
        if (await pairing.revoke(platformOf(name), userId)) {
          io.out(`revoked ${name} user ${userId}`);
          return 0;
        }
        io.err(`${name} user ${userId} is not paired`);
        return 1;
      }
      default:
        throw new CliError(`usage:\n${PAIRING_USAGE}`);
    }
  } finally {
    await store.close();
  }
}
