/**
 * More bot accounts per platform (HERALD_BOT_ACCOUNTS): a second Telegram bot, another Discord bot, another Slack
 * app, each with a name that routes pick profiles by (`routes[].account`). The account of the <PLATFORM>_BOT_TOKEN
 * settings is `default`. Each account has its own connection (ingress) and its own REST client (egress): a reply
 * goes out through the bot that received the message.
 *
 * An extra Slack app uses Socket Mode (`app_token`) or Events over HTTP (`signing_secret`): each Slack app has its
 * own Request URL, so an extra app's events arrive at `POST /slack/events/<name>`, checked against its own secret.
 *
 * An extra WhatsApp number (`phone_number_id`) belongs to the same Meta app: its webhooks arrive at the one
 * `POST /whatsapp/webhook`, told apart by the number; `bot_token` is its access token (default WHATSAPP_ACCESS_TOKEN,
 * as one system user's token usually covers every number of the business).
 */
import { z } from 'zod';

export const DEFAULT_ACCOUNT = 'default';
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const name = z
  .string()
  .regex(ACCOUNT_NAME, 'an account name is lower-case letters, digits, _ and -, at most 32 characters')
  .refine((n) => n !== DEFAULT_ACCOUNT, `"${DEFAULT_ACCOUNT}" is the account of <PLATFORM>_BOT_TOKEN`);

const apiUrl = z.string().trim().url('must be a URL such as http://host:port/');

const telegram = z.strictObject({
  platform: z.literal('telegram'),
  name,
  bot_token: z.string().regex(/^\d+:[\w-]+$/, 'must look like 123456:ABC-DEF… (from @BotFather)'),
  webhook_url: z.string().url('must be a URL').optional(),
  webhook_secret: z
    .string()
    .regex(/^[\w-]{1,256}$/, '1-256 characters A-Z a-z 0-9 _ -')
    .optional(),
  /** Its own Bot API server (default: TELEGRAM_API_ROOT). */
  api_root: apiUrl.optional(),
});
const discord = z.strictObject({ platform: z.literal('discord'), name, bot_token: z.string().trim().min(1, 'must not be empty'), api_url: apiUrl.optional() });
const slack = z.strictObject({
  platform: z.literal('slack'),
  name,
  bot_token: z.string().regex(/^xoxb-/, 'must start with xoxb-'),
  /** Socket Mode; takes precedence over `signing_secret`. */
  app_token: z
    .string()
    .regex(/^xapp-/, 'must start with xapp-')
    .optional(),
  /** Events over HTTP at `POST /slack/events/<name>` (the app's Request URL). */
  signing_secret: z.string().trim().min(1, 'must not be empty').optional(),
  api_url: apiUrl.optional(),
});

const whatsapp = z.strictObject({
  platform: z.literal('whatsapp'),
  name,
  phone_number_id: z.string().regex(/^\d{1,32}$/, 'must be the phone number ID (digits)'),
  bot_token: z.string().trim().min(1, 'must not be empty').optional(),
  api_url: apiUrl.optional(),
});

const botAccountSchema = z.discriminatedUnion('platform', [telegram, discord, slack, whatsapp], {
  error: 'platform must be telegram, discord, slack or whatsapp',
});
export type BotAccount = z.output<typeof botAccountSchema>;

export const botAccountsSchema = z
  .preprocess((v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }, z.array(botAccountSchema))
  .superRefine((accounts, ctx) => {
    const seen = new Set<string>();
    for (const a of accounts) {
      const id = `${a.platform}:${a.name}`;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `account ${id} is named twice` });
      seen.add(id);
      if (a.platform === 'telegram' && a.webhook_url && !a.webhook_secret)
        ctx.addIssue({ code: 'custom', message: `account ${id}: webhook_secret must be set with webhook_url` });
      if (a.platform === 'slack' && !a.app_token && !a.signing_secret) {
        ctx.addIssue({
          code: 'custom',
          message: `account ${id}: needs app_token (Socket Mode) or signing_secret (Events over HTTP at POST /slack/events/${a.name})`,
        });
      }
    }
  });

/** The secrets of the extra accounts, for the log scrubber. */
export function accountSecrets(accounts: readonly BotAccount[]): string[] {
  return accounts.flatMap((a) => {
    const more = a.platform === 'slack' ? [a.app_token, a.signing_secret] : a.platform === 'telegram' ? [a.webhook_secret] : [];
    return [a.bot_token, ...more].filter((x): x is string => x !== undefined);
  });
}
