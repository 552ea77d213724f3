import { describe, expect, it } from 'vitest';
import { sessionKeyFor } from './router.js';

describe('sessionKeyFor', () => {
  it('keys DMs by chat', () => {
    expect(sessionKeyFor({ platform: 'telegram', chatType: 'dm', chatId: '42', userId: '42' })).toBe('agent:main:telegram:dm:42');
  });
  it('gives each user of a group their own session, topic included', () => {
    const a = sessionKeyFor({ platform: 'telegram', chatType: 'group', chatId: '-100', userId: '1' });
    const b = sessionKeyFor({ platform: 'telegram', chatType: 'group', chatId: '-100', userId: '2' });
    expect(a).toBe('agent:main:telegram:group:-100:1');
    expect(b).not.toBe(a);
    expect(sessionKeyFor({ platform: 'telegram', chatType: 'group', chatId: '-100', threadId: '7', userId: '1' })).toBe('agent:main:telegram:group:-100:7:1');
  });
  it('shares a thread between its participants', () => {
    const a = sessionKeyFor({ platform: 'discord', chatType: 'thread', chatId: 'C', threadId: 'T', userId: '1' });
    const b = sessionKeyFor({ platform: 'discord', chatType: 'thread', chatId: 'C', threadId: 'T', userId: '2' });
    expect(a).toBe('agent:main:discord:thread:C:T');
    expect(b).toBe(a);
  });
  it('keys plain channels per user and Slack DM threads on their own', () => {
    expect(sessionKeyFor({ platform: 'discord', chatType: 'channel', chatId: 'C', userId: '9' })).toBe('agent:main:discord:channel:C:9');
    expect(sessionKeyFor({ platform: 'slack', chatType: 'dm', chatId: 'D1', threadId: '1.2', userId: 'U' })).toBe('agent:main:slack:dm:D1:1.2');
  });
  it("puts the agent profile in the key; the default profile keeps Hermes' agent:main keys", () => {
    const msg = { platform: 'telegram' as const, chatType: 'group' as const, chatId: '-100', userId: '7' };
    expect(sessionKeyFor(msg, 'default')).toBe('agent:main:telegram:group:-100:7');
    expect(sessionKeyFor(msg, 'support')).toBe('agent:support:telegram:group:-100:7');
  });
});
