import { describe, expect, it } from 'vitest';
import { InFlight } from './in-flight.js';
import { KeyedSerial } from './keyed-serial.js';

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('KeyedSerial', () => {
  it("runs one key's tasks one at a time in call order, other keys alongside, and goes on after a failure", async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    const slow = gate();
    const a1 = serial.run('a', async () => {
      await slow.opened;
      log.push('a1');
      throw new Error('a1 failed');
    });
    const a2 = serial.run('a', async () => void log.push('a2'));
    await serial.run('b', async () => void log.push('b1'));
    expect(log).toEqual(['b1']);
    slow.open();
    await expect(a1).rejects.toThrow('a1 failed');
    await a2;
    expect(log).toEqual(['b1', 'a1', 'a2']);
    await serial.idle();
    expect(serial.size).toBe(0);
  });
});

describe('InFlight', () => {
  it('waits for what it tracks, or says it stopped waiting', async () => {
    const inFlight = new InFlight();
    const quick = gate();
    void inFlight.track(quick.opened);
    void inFlight.track(Promise.reject(new Error('ignored here')));
    const settled = inFlight.settled();
    quick.open();
    expect(await settled).toBe(true);
    expect(inFlight.size).toBe(0);

    void inFlight.track(new Promise(() => undefined)); // never settles
    expect(await inFlight.settled(20)).toBe(false);
    expect(inFlight.size).toBe(1);
  });
});
