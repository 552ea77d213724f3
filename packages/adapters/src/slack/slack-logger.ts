/**
 * Bridges pino to the @slack/logger interface Bolt, the Web API client and the Socket Mode client expect.
 * pino owns the level; Slack's setLevel is ignored so Bolt cannot turn our logging up or down.
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from 'pino';

function render(parts: unknown[]): string {
  return parts.map((p) => (p instanceof Error ? (p.stack ?? p.message) : typeof p === 'string' ? p : JSON.stringify(p))).join(' ');
}

export function toSlackLogger(logger: Logger): SlackLogger {
  return {
    debug: (...msg: unknown[]) => logger.debug(render(msg)),
    info: (...msg: unknown[]) => logger.info(render(msg)),
    warn: (...msg: unknown[]) => logger.warn(render(msg)),
    error: (...msg: unknown[]) => logger.error(render(msg)),
    setLevel: () => {},
    getLevel: () => {
      if (logger.isLevelEnabled('debug')) return LogLevel.DEBUG;
      if (logger.isLevelEnabled('info')) return LogLevel.INFO;
      if (logger.isLevelEnabled('warn')) return LogLevel.WARN;
      return LogLevel.ERROR;
    },
    setName: () => {},
  };
}
