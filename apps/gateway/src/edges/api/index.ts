/**
 * The OpenAI-compatible HTTP API, a fourth way to talk to the agent (see routes.ts for the endpoints, turns.ts for
 * sessions, reply-channel.ts for how answers come back from any worker). Mounted by ingress processes when
 * HERALD_API_KEYS is set; workers only need its egress (egress.ts), which every worker has.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import type { Logger } from '../../support/logger.js';
import type { ControlBus } from '../../queue/control.js';
import type { Mailbox } from '../../queue/mailbox.js';
import type { TurnProducer } from '../../queue/producer.js';
import type { HeraldMetrics } from '../../support/ops/metrics.js';
import { UserRateLimiter } from '../ingress/inbound-guard.js';
import type { ConversationServices } from '../../features/sessions/services.js';
import { createRedis, redisTarget } from '../../support/redis.js';
import { logConnectionErrors } from '../../support/redis-errors.js';
import { ReplyListener } from './reply-channel.js';
import { mountApiRoutes } from './routes.js';
import { ApiTurns } from './turns.js';

export { createApiEgress, apiRelays, apiTurnEnd } from './egress.js';
export { ReplyPublisher } from './reply-channel.js';

export interface ApiDeps {
  config: HeraldConfig;
  http: FastifyInstance;
  redis: Redis;
  store: SessionStore;
  producer: TurnProducer;
  mailbox: Mailbox;
  control: ControlBus;
  conversation: ConversationServices;
  metrics: HeraldMetrics;
  log: Logger;
}

export interface MountedApi {
  /** Answers every waiting request (503) and stops listening for replies. */
  close(): Promise<void>;
}

export async function mountApi(deps: ApiDeps): Promise<MountedApi> {
  const { config } = deps;
  const log = deps.log.child({ component: 'api' });
  const subscriber = createRedis(redisTarget(config));
  logConnectionErrors(log, 'api replies', subscriber);
  await subscriber.connect();
  const listener = new ReplyListener(deps.redis, subscriber, config.redisPrefix, log);
  await listener.start();
  const shutdown = new AbortController();
  const turns = new ApiTurns({
    store: deps.store,
    producer: deps.producer,
    mailbox: deps.mailbox,
    control: deps.control,
    listener,
    conversation: deps.conversation,
    limiter: new UserRateLimiter(deps.redis, config.redisPrefix, config.apiRateLimit),
    log,
  });
  await mountApiRoutes(deps.http, { keys: config.apiKeys, turns, metrics: deps.metrics, log, shutdown: shutdown.signal, profiles: deps.conversation.profiles });
  log.info({ keys: config.apiKeys.length }, 'OpenAI-compatible API on /v1 (HERALD_API_KEYS)');
  return {
    close: async () => {
      shutdown.abort();
      await listener.close();
      subscriber.disconnect();
    },
  };
}
