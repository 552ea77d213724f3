import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../types.js';
import { isRead, readUpdate, routeUpdate, type UpdateHandlers } from './normalize.js';
import type { TgMessage } from './wire.js';

const message = { message_id: 5, date: 1_700_000_000, chat: { id: 777, type: 'private' }, from: { id: 777, first_name: 'Ann' }, text: 'hi' };
const press = { id: 'cb1', from: { id: 777, first_name: 'Ann' }, data: 'choice:2', message: { ...message, text: 'pick one' } };

/** Handlers that record what reached them. */
function recording(): { handlers: UpdateHandlers; messages: TgMessage[]; presses: InboundMessage[] } {
  const messages: TgMessage[] = [];
  const presses: InboundMessage[] = [];
  return {
    messages,
    presses,
    handlers: {
      message: async (m) => void messages.push(m),
      callback_query: async (p) => void presses.push(p),
    },
  };
}

async function route(update: unknown, handlers: UpdateHandlers): Promise<void> {
  const read = readUpdate(update);
  if (!isRead(read)) throw new Error(`not routed: ${read.refused}`);
  await routeUpdate(read, handlers);
}

describe('the update dispatcher', () => {
  it('sends a message to the message handler and a button press, normalised, to the press handler', async () => {
    const r = recording();
    await route({ update_id: 1, message }, r.handlers);
    await route({ update_id: 2, callback_query: press }, r.handlers);
    expect(r.messages.map((m) => m.text)).toEqual(['hi']);
    expect(r.presses).toHaveLength(1);
    expect(r.presses[0]).toMatchObject({ conversationId: 'telegram:777', press: { data: 'choice:2' }, interaction: { id: 'cb1' } });
  });

  it('takes an update of a type Herald does not ask for without handing anything over', async () => {
    const r = recording();
    const read = readUpdate({ update_id: 3, edited_message: message });
    expect(read).toEqual({ id: 3, type: 'other' });
    await route({ update_id: 3, edited_message: message }, r.handlers);
    expect([...r.messages, ...r.presses]).toEqual([]);
  });

  it('gives an update carrying both a message and a press to the message handler only', async () => {
    const r = recording();
    await route({ update_id: 4, message, callback_query: press }, r.handlers);
    expect(r.messages).toHaveLength(1);
    expect(r.presses).toEqual([]);
  });

  it('refuses an update without an id or with an unreadable message, and drops a press it cannot read', () => {
    expect(readUpdate({ message })).toEqual({ refused: 'invalid' });
    expect(readUpdate({ update_id: 5, message: { ...message, text: 7 } })).toEqual({ refused: 'invalid', id: 5 });
    expect(readUpdate({ update_id: 6, callback_query: { ...press, data: undefined } })).toEqual({ refused: 'dropped', id: 6 });
  });

  it('rejects when the handler could not take the update, so it stays unconfirmed', async () => {
    const handlers: UpdateHandlers = { message: () => Promise.reject(new Error('queue down')), callback_query: async () => undefined };
    await expect(route({ update_id: 7, message }, handlers)).rejects.toThrow('queue down');
  });
});
