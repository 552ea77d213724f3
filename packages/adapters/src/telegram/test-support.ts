/** Shared set-up for this adapter's tests: a silent logger, fast reconnect waits, a started polling ingress. */
import pino from 'pino';
import type { TelegramFake } from '../../../../test/fakes/telegram/index.js';
import type { InboundMessage } from '../types.js';
import type { ReconnectWaits, TelegramIngressOptions } from './config.js';
import { TelegramIngress } from './ingress.js';

export const silentLogger = pino({ level: 'silent' });

export const FAST_WAITS: ReconnectWaits = {
  conflictMs: [5, 5, 5, 5, 5],
  networkInitialMs: 5,
  networkMaxMs: 20,
  networkLongAfter: 3,
  networkLongMaxMs: 40,
};

export interface RunningIngress {
  ingress: TelegramIngress;
  received: InboundMessage[];
}

export async function startIngress(fake: TelegramFake, overrides: Partial<TelegramIngressOptions> = {}): Promise<RunningIngress> {
  const received: InboundMessage[] = [];
  const ingress = new TelegramIngress({
    token: fake.token,
    apiRoot: fake.apiRoot,
    logger: silentLogger,
    waits: FAST_WAITS,
    pollTimeoutSec: 2,
    ...overrides,
  });
  await ingress.start(async (m) => {
    received.push(m);
  });
  return { ingress, received };
}
