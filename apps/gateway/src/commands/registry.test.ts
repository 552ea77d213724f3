import { describe, expect, it } from 'vitest';
import { COMMANDS, helpText, menuCommands, parseCommand } from './registry.js';

describe('command registry', () => {
  it('parses registered commands, aliases, @botname suffixes and arguments', () => {
    expect(parseCommand('/stop')?.spec.name).toBe('stop');
    expect(parseCommand('/stop@herald_bot')?.spec.name).toBe('stop');
    expect(parseCommand('/reset')?.spec.name).toBe('new');
    expect(parseCommand('/STATUS')?.spec.name).toBe('status');
    expect(parseCommand('/queue  do this\nand that')).toMatchObject({ spec: { name: 'queue' }, args: 'do this\nand that' });
  });

  it('treats unknown commands and paths as ordinary text', () => {
    expect(parseCommand('/tmp/x is full')).toBeNull();
    expect(parseCommand('/frobnicate now')).toBeNull();
    expect(parseCommand('please /stop')).toBeNull();
    expect(parseCommand('hello')).toBeNull();
  });

  it('drives /help and the Telegram menu from the same table', () => {
    const help = helpText();
    for (const c of COMMANDS) expect(help).toContain(`/${c.name}`);
    expect(help).toContain('(also /reset)');
    expect(menuCommands().map((c) => c.name)).toEqual(COMMANDS.map((c) => c.name));
  });
});
