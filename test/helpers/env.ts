import type { FakeLLM } from '../fakes/llm/index.js';
import type { TelegramFake } from '../fakes/telegram/index.js';

/** Gateway environment for a Telegram stand-in and an OpenAI stand-in, everyone allowed. */
export function telegramEnv(tg: TelegramFake, llm: FakeLLM, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.url,
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    GATEWAY_ALLOW_ALL_USERS: 'true',
    ...extra,
  };
}

/** Texts the bot sent (sendMessage) to one chat, in order. */
export function repliesIn(tg: TelegramFake, chatId: number): string[] {
  return tg.sent.filter((s) => s.method === 'sendMessage' && s.chat_id === String(chatId)).map((s) => s.text ?? '');
}
