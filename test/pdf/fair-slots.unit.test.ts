import { describe, expect, it } from 'vitest';
import { FairSlots, SOON_ROUNDS } from '../../src/pdf/workers/fair-slots.ts';

/** Takes a slot and records, in `log`, when it was granted. */
function taker(slots: FairSlots, log: string[]) {
  return (account: string, bounded: boolean, name = account) =>
    slots.take(account, bounded).then((granted) => {
      log.push(granted ? name : `${name} refused`);
      return granted;
    });
}

const settle = () => new Promise((r) => setImmediate(r));

describe('FairSlots', () => {
  it('lets an account alone take every slot, and refuses its next bounded task at once', async () => {
    const slots = new FairSlots(2);
    const log: string[] = [];
    const take = taker(slots, log);
    expect(await take('a', true)).toBe(true);
    expect(await take('a', true)).toBe(true);
    expect(await take('a', true)).toBe(false);
    slots.release('a');
    expect(await take('a', true)).toBe(true);
    expect(log).toEqual(['a', 'a', 'a refused', 'a']);
  });

  it('lets another account wait for the next slot while the one holding them all is refused', async () => {
    const slots = new FairSlots(2);
    const log: string[] = [];
    const take = taker(slots, log);
    await take('a', true);
    await take('a', true);
    const b = take('b', true, 'b1'); // b holds none of its share (one of two): it waits
    await settle();
    expect(await take('a', true)).toBe(false); // a holds two, its share is one now
    expect(await take('b', true, 'b2')).toBe(false); // b awaits its one already
    expect(log).toEqual(['a', 'a', 'a refused', 'b2 refused']);
    slots.release('a');
    expect(await b).toBe(true);
    expect(log.at(-1)).toBe('b1');
    // One each now: a third account waits too (its share is one of two, rounded up), and gets the next slot.
    const c = take('c', true);
    await settle();
    slots.release('a');
    expect(await c).toBe(true);
  });

  it('hands a freed slot to the waiting account that holds fewest, then to the one served longest ago', async () => {
    const slots = new FairSlots(2);
    const log: string[] = [];
    const take = taker(slots, log);
    await take('a', false, 'a1');
    await take('b', false, 'b1');
    const waiting = [
      take('a', false, 'a2'),
      take('a', false, 'a3'),
      take('c', false, 'c1'),
      take('b', false, 'b2'),
    ];
    await settle();
    // a's slot frees: c, which holds none and was never served, goes first though it came third.
    slots.release('a');
    await settle();
    // c's frees: a (none) before b (one).
    slots.release('c');
    await settle();
    // b's frees: b (none) before a (one), though a's task waits longer.
    slots.release('b');
    await settle();
    slots.release('a');
    await Promise.all(waiting);
    expect(log).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('queues unbounded tasks however many there are, accounts taking turns whoever queued first', async () => {
    const slots = new FairSlots(1);
    const log: string[] = [];
    const take = taker(slots, log);
    await take('a', false, 'a0');
    const tasks = [
      ...Array.from({ length: 5 }, (_, i) => take('a', false, `a${i + 1}`)),
      take('b', false, 'b1'),
      take('b', false, 'b2'),
    ];
    for (let i = 0; i < 7; i++) {
      await settle();
      slots.release(log.at(-1)!.slice(0, 1));
    }
    await Promise.all(tasks);
    expect(log).toEqual(['a0', 'b1', 'a1', 'b2', 'a2', 'a3', 'a4', 'a5']);
  });

  it('takeSoon takes a free slot, waits behind fewer than SOON_ROUNDS rounds of tasks, and refuses a longer queue', async () => {
    const slots = new FairSlots(2);
    const log: string[] = [];
    const take = taker(slots, log);
    expect(await slots.takeSoon('a')).toBe(true);
    expect(await slots.takeSoon('a')).toBe(true);
    const waiters: Promise<boolean>[] = [];
    for (let i = 0; i < SOON_ROUNDS * 2; i++) {
      expect(slots.hasRoomSoon()).toBe(true);
      waiters.push(slots.takeSoon(`w${i}`)); // none free, fewer waiting than the rounds: it waits
    }
    expect(slots.hasRoomSoon()).toBe(false);
    expect(await slots.takeSoon('d')).toBe(false); // the rounds are full: refused at once, nothing queued
    const unbounded = take('e', false); // an ordinary task still queues behind them
    slots.release('a');
    slots.release('a');
    for (let i = 0; i < waiters.length; i++) {
      expect(await waiters[i]).toBe(true);
      slots.release(`w${i}`);
    }
    await unbounded;
    expect(log).toEqual(['e']);
  });

  it('takeSoon gives up its place when its signal aborts: the slot goes to the next task', async () => {
    const slots = new FairSlots(1);
    const log: string[] = [];
    const take = taker(slots, log);
    await take('a', false);
    const controller = new AbortController();
    const soon = slots.takeSoon('b', controller.signal);
    const next = take('c', false);
    await settle();
    controller.abort();
    expect(await soon).toBe(false);
    slots.release('a');
    expect(await next).toBe(true);
    expect(log).toEqual(['a', 'c']);
    // An aborted signal is refused before it queues.
    expect(await slots.takeSoon('d', controller.signal)).toBe(false);
  });

  it('admitSoon keeps a place that counts against the room, and its take waits however long the queue grew', async () => {
    const slots = new FairSlots(1);
    const places = Array.from({ length: SOON_ROUNDS + 1 }, () => slots.admitSoon()!); // the free slot, and the rounds
    expect(places.every(Boolean)).toBe(true);
    expect(slots.hasRoomSoon()).toBe(false);
    expect(slots.admitSoon()).toBeUndefined();
    const [first, ...others] = places;
    expect(await slots.takeSoon('x')).toBe(true); // the free slot is anyone's until taken
    const queued = ['y0', 'y1', 'y2'].map((a) => slots.take(a, false)); // the queue grows behind the admitted
    for (const other of others) {
      other.cancel();
      other.cancel(); // once
    }
    expect(slots.hasRoomSoon()).toBe(false); // three waiting, no free slot
    let took = false;
    const admitted = first!.take('z').then((t) => (took = t));
    await settle();
    expect(took).toBe(false); // not refused: waiting behind the y's
    slots.release('x');
    for (const [i, y] of queued.entries()) {
      expect(await y).toBe(true);
      slots.release(`y${i}`);
    }
    expect(await admitted).toBe(true); // z holds the slot
    // Taken, the place is gone: cancel does nothing. A second take (composing again) waits too, even behind full
    // rounds, where takeSoon is refused.
    first!.cancel();
    expect(slots.hasRoomSoon()).toBe(true); // z holds the slot, nobody waits or is admitted
    const rounds = Array.from({ length: SOON_ROUNDS }, (_, i) => slots.take(`r${i}`, false));
    expect(slots.hasRoomSoon()).toBe(false); // (a cancel that counted would leave room)
    expect(await slots.takeSoon('refused')).toBe(false);
    const again = first!.take('z');
    slots.release('z');
    for (const [i, r] of rounds.entries()) {
      expect(await r).toBe(true);
      slots.release(`r${i}`);
    }
    expect(await again).toBe(true);
    slots.release('z');
    expect(slots.hasRoomSoon()).toBe(true);
  });

  it('an admitted take gives up when its signal aborts, and a cancelled place frees its room', async () => {
    const slots = new FairSlots(1);
    expect(await slots.takeSoon('a')).toBe(true);
    const places = Array.from({ length: SOON_ROUNDS }, () => slots.admitSoon()!);
    expect(places.every(Boolean)).toBe(true);
    expect(slots.hasRoomSoon()).toBe(false);
    const controller = new AbortController();
    const waiting = places[0]!.take('b', controller.signal);
    await settle();
    controller.abort();
    expect(await waiting).toBe(false);
    expect(slots.hasRoomSoon()).toBe(true); // out of the queue, and its place is used
    places[1]!.cancel();
    const unused = Array.from({ length: SOON_ROUNDS }, () => slots.admitSoon()!);
    expect(slots.hasRoomSoon()).toBe(false);
    unused[0]!.cancel();
    expect(slots.hasRoomSoon()).toBe(true);
  });
});
