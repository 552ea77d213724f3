import { describe, expect, it } from 'vitest';
import { COMMANDS, helpText, menuCommands, parseCommand } from './registry.js';

describe('command registry', () => {
  it('parses registered commands, aliases, @botname suffixes and arguments', () => {
    expect(parseCommand('/stop')?.spec.name).toBe('stop');
    expect(parseCommand('/stop@herald_bot')?.spec.name).toBe('stop');
    expect(parseCommand('  /stop@herald_bot  ')?.spec.name).toBe('stop');
    expect(parseCommand('/reset')?.spec.name).toBe('new');
    expect(parseCommand('/STATUS')?.spec.name).toBe('status');
    expect(parseCommand('/queue  do this\nand that')).toMatchObject({ spec: { name: 'queue' }, args: 'do this\nand that' });
    expect(parseCommand('/model anthropic:claude-sonnet-4-5')).toMatchObject({ spec: { name: 'model' }, args: 'anthropic:claude-sonnet-4-5' });
    expect(parseCommand('/title Trip to Rome')).toMatchObject({ spec: { name: 'title' }, args: 'Trip to Rome' });
  });

  it('treats unknown commands and paths as ordinary text', () => {
    expect(parseCommand('/tmp/x is full')).toBeNull();
    expect(parseCommand('/frobnicate now')).toBeNull();
    expect(parseCommand('please /stop')).toBeNull();
    expect(parseCommand('/stop/now')).toBeNull();
    expect(parseCommand('hello')).toBeNull();
  });

  it('has every command the issue asks for, each listed once, names fit for Telegram menus', () => {
    const names = COMMANDS.flatMap((c) => [c.name, ...c.aliases]);
    expect(new Set(names).size).toBe(names.length);
    for (const n of ['new', 'reset', 'stop', 'status', 'usage', 'retry', 'undo', 'compress', 'queue', 'title', 'resume', 'model', 'help']) {
      expect(names).toContain(n);
    }
    for (const c of menuCommands()) {
      expect(c.name).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(c.description.length).toBeGreaterThanOrEqual(3);
      expect(c.description.length).toBeLessThanOrEqual(256);
    }
  });

  it('lets only commands that leave the transcript alone run while a turn is busy', () => {
    const refusing = COMMANDS.filter((c) => !c.bypassesBusy)
      .map((c) => c.name)
      .sort();
    expect(refusing).toEqual(['compress', 'personality', 'resume', 'retry', 'undo']);
  });

  it('drives /help and the Telegram menu from the same table', () => {
    const help = helpText();
    for (const c of COMMANDS) expect(help).toContain(`/${c.name}`);
    expect(help).toContain('(also /reset)');
    expect(help).toContain('/herald status');
    expect(menuCommands().map((c) => c.name)).toEqual(COMMANDS.map((c) => c.name));
  });
});
