/**
 * How many rounds of tasks (a round: as many as there are slots) one that takes its slot soon may wait behind. At 20
 * documents at once in `bench:lifecycle`, with one round (the admitted ones still reading counted in it) 43 % of the
 * finalizations were refused their local attempt; with two, 4 %, and the last action to a signed PDF was no slower
 * (p99 97 ms against 121; one run each, bench/README.md).
 */
export const SOON_ROUNDS = 2;

/** A place kept for a task that takes its slot soon (FairSlots.admitSoon). */
export interface SoonAdmission {
  /**
   * takeSoon, except that the queue's length no longer refuses it (only `signal`). The place counts against the room
   * until the first take; a later take (a task composing again) waits as well: the task was admitted, and did its
   * work on that promise.
   */
  take(account: string, signal?: AbortSignal): Promise<boolean>;
  /** Gives the place up, if it was not taken (a second call does nothing). */
  cancel(): void;
}

/**
 * The slots (threads) of one worker pool, shared fairly between accounts. A task takes a free slot at once, so an
 * account alone may use them all. When every slot is taken the task waits, and a freed slot goes to the waiting
 * task whose account holds the fewest slots; among accounts holding as many, to the one served longest ago (then
 * the longest waiting task), so accounts that each hold one take turns rather than the earliest queue winning every
 * time. An account that filled the pool before others came hands its slots, one finished task at a time, to the
 * others until each holds its share.
 *
 * `bounded` (uploads, where a person waits on the answer): an account may wait only while it holds and awaits
 * fewer slots than its share (the slots divided among the accounts running or waiting, at least one); past that the
 * task is refused at once, so a flood from one account is turned away instead of queueing in front of the others.
 * Unbounded (finalization) tasks always wait their turn.
 */
export class FairSlots {
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly waiting: { account: string; grant: () => void }[] = [];
  /** When each account holding or awaiting a slot was last given one (a counter, not a time). */
  private readonly servedAt = new Map<string, number>();
  private served = 0;
  /** Tasks admitted to take a slot soon (admitSoon) that have not yet asked for it. */
  private admitted = 0;

  constructor(private readonly size: number) {
    this.free = size;
  }

  /** Resolves true once `account` holds a slot (release it with `release`); false when a bounded task is refused. */
  async take(account: string, bounded: boolean): Promise<boolean> {
    if (this.takeFree(account)) return true;
    if (bounded && this.claimsOf(account) >= this.shareOf(account)) return false;
    await new Promise<void>((grant) => this.waiting.push({ account, grant }));
    return true;
  }

  /**
   * Whether takeSoon would take or wait for a slot now (rather than refuse): fewer tasks waiting or admitted
   * (admitSoon) than SOON_ROUNDS rounds of the slots, plus the slots free.
   */
  hasRoomSoon(): boolean {
    return this.waiting.length + this.admitted < SOON_ROUNDS * this.size + this.free;
  }

  /**
   * A slot soon: a free one at once, or a wait behind at most SOON_ROUNDS rounds of tasks. False, with nothing held
   * or queued, when the queue is longer than that or `signal` aborts while it waits.
   */
  async takeSoon(account: string, signal?: AbortSignal): Promise<boolean> {
    if (this.takeFree(account)) return true;
    if (!this.hasRoomSoon()) return false;
    return this.wait(account, signal);
  }

  /**
   * A place among the tasks that take a slot soon, kept from before the work that comes ahead of the task, so that
   * it is not refused for a queue that grew meanwhile; counted by hasRoomSoon until it is taken or cancelled.
   * Undefined (refused) when hasRoomSoon is false.
   */
  admitSoon(): SoonAdmission | undefined {
    if (!this.hasRoomSoon()) return undefined;
    this.admitted += 1;
    let open = true;
    const close = () => {
      if (open) this.admitted -= 1;
      open = false;
    };
    return {
      // Admitted, it waits its turn (or until `signal` aborts) however long the queue has grown.
      take: async (account, signal) => {
        close();
        return this.takeFree(account) || this.wait(account, signal);
      },
      cancel: close,
    };
  }

  /** Queued for the next slot: true once given one, false (and out of the queue) when `signal` aborts first. */
  private wait(account: string, signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        resolve(false);
      };
      const waiter = {
        account,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(account: string): void {
    this.adjust(account, -1);
    let next = -1;
    for (let i = 0; i < this.waiting.length; i++) {
      if (next < 0 || this.before(this.waiting[i]!.account, this.waiting[next]!.account)) next = i;
    }
    if (next >= 0) {
      const [waiter] = this.waiting.splice(next, 1);
      this.grant(waiter!.account); // the slot passes on as it is
      waiter!.grant();
    } else this.free += 1;
    if (this.claimsOf(account) === 0) this.servedAt.delete(account);
  }

  /** A free slot for `account`, if there is one now. */
  private takeFree(account: string): boolean {
    if (this.free === 0) return false;
    this.free -= 1;
    this.grant(account);
    return true;
  }

  /** Whether a task of `a` goes before one of `b` that waits longer. */
  private before(a: string, b: string): boolean {
    const [heldA, heldB] = [this.heldBy(a), this.heldBy(b)];
    if (heldA !== heldB) return heldA < heldB;
    return (this.servedAt.get(a) ?? 0) < (this.servedAt.get(b) ?? 0);
  }

  private grant(account: string): void {
    this.adjust(account, 1);
    this.served += 1;
    this.servedAt.set(account, this.served);
  }

  private heldBy(account: string): number {
    return this.held.get(account) ?? 0;
  }

  /** Slots the account holds plus its tasks waiting for one. */
  private claimsOf(account: string): number {
    return this.heldBy(account) + this.waiting.filter((w) => w.account === account).length;
  }

  private shareOf(account: string): number {
    const accounts = new Set([...this.held.keys(), ...this.waiting.map((w) => w.account), account]);
    return Math.max(1, Math.ceil(this.size / accounts.size));
  }

  private adjust(account: string, by: number): void {
    const n = this.heldBy(account) + by;
    if (n > 0) this.held.set(account, n);
    else this.held.delete(account);
  }
}
