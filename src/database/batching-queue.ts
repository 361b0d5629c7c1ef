import { type CapturedTrace, tracing } from '../common/tracing/tracing.js';
import { DatabaseUnavailableError } from './database-errors.js';

export interface BatchingOptions {
  /** The name of a statement's span, when tracing: it links to the requests it serves. */
  spanName: string;
  /** Statements in flight at once; further items wait and go out together. */
  concurrency: number;
  /** Items in one statement at most. */
  maxBatch: number;
  /**
   * Whether a statement's error may come from one of its items alone (a value the
   * database refuses): the batch is then split in halves, and each half written again,
   * until every item has its own outcome or error. Unset: the error settles the batch.
   */
  isItemError?(error: unknown): boolean;
  /**
   * How long an item may wait for its outcome, from its submission: then it is rejected
   * with DatabaseUnavailableError (a 503), and dropped if it was not sent yet. Without it,
   * an item behind a statement that hangs waits for that statement's time-out and then
   * for its own.
   */
  deadlineMs: number;
}

interface Waiting<Item, Outcome> {
  item: Item;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
  /** performance.now() past which it is rejected. */
  deadlineAt: number;
  /** Resolved or rejected (at its deadline, say): not worth sending any more. */
  settled: boolean;
  /** The submitter's trace, which the statement carrying the item links to. */
  trace: CapturedTrace | undefined;
}

/**
 * Gathers the items submitted while `concurrency` statements are in flight, and sends them
 * together in the next statement: group commit for inserts, and the same for reads. An
 * item submitted when a statement is free goes out at once, alone: nothing ever waits for
 * company. Each item is settled only when the statement that carried it has finished
 * (committed, for an autocommitted write), with its own outcome, or with that
 * statement's error. A statement sent after an item was submitted sees everything
 * committed before, so batching never serves a stale read. A batch that failed as a whole
 * wrote nothing (one statement), so writing its halves again is safe.
 */
export class BatchingQueue<Item, Outcome> {
  private readonly waiting: Waiting<Item, Outcome>[] = [];
  /** Every item not settled yet, sent or not, in submission (so deadline) order. */
  private readonly unsettled: Waiting<Item, Outcome>[] = [];
  private deadline: NodeJS.Timeout | undefined;
  private inFlight = 0;

  /**
   * @param write writes a batch in one statement; it answers one outcome per item, in order.
   */
  constructor(
    private readonly write: (items: Item[]) => Promise<Outcome[]>,
    private readonly options: BatchingOptions,
  ) {}

  submit(item: Item): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting<Item, Outcome> = {
        item,
        resolve,
        reject,
        deadlineAt: performance.now() + this.options.deadlineMs,
        settled: false,
        trace: tracing().capture(),
      };
      this.waiting.push(waiting);
      this.unsettled.push(waiting);
      this.deadline ??= this.armDeadline();
      if (this.inFlight < this.options.concurrency) this.flush();
    });
  }

  /**
   * One timer for every item, set for the oldest unsettled one: items are submitted in
   * deadline order, so a timer per item (which costs creates measurably at 64
   * connections, bench/README.md) is not needed.
   */
  private armDeadline(): NodeJS.Timeout | undefined {
    const [oldest] = this.unsettled;
    if (!oldest) return undefined;
    return setTimeout(
      () => this.rejectExpired(),
      Math.max(0, oldest.deadlineAt - performance.now()),
    ).unref();
  }

  private rejectExpired(): void {
    const now = performance.now();
    while (this.unsettled.length > 0 && this.unsettled[0].deadlineAt <= now) {
      this.rejectItem(
        this.unsettled.shift()!,
        new DatabaseUnavailableError(
          `no answer from the database within ${this.options.deadlineMs} ms`,
        ),
      );
    }
    this.forgetSettled();
    this.deadline = this.armDeadline();
  }

  /** An item is settled once: by its statement, or at its deadline, whichever is first. */
  private resolveItem(waiting: Waiting<Item, Outcome>, outcome: Outcome): void {
    if (waiting.settled) return;
    waiting.settled = true;
    waiting.resolve(outcome);
  }

  private rejectItem(waiting: Waiting<Item, Outcome>, error: unknown): void {
    if (waiting.settled) return;
    waiting.settled = true;
    waiting.reject(error);
  }

  /** Drops the settled items at the front: batches settle about in submission order. */
  private forgetSettled(): void {
    while (this.unsettled.length > 0 && this.unsettled[0].settled) this.unsettled.shift();
  }

  private flush(): void {
    const batch = this.waiting.splice(0, this.options.maxBatch).filter(({ settled }) => !settled);
    if (batch.length === 0) {
      if (this.waiting.length > 0) this.flush();
      return;
    }
    this.inFlight++;
    void this.settle(batch).finally(() => {
      this.inFlight--;
      if (this.waiting.length > 0) this.flush();
    });
  }

  private async settle(batch: Waiting<Item, Outcome>[]): Promise<void> {
    try {
      // Awaited inside the try, so that even a synchronous throw settles this batch.
      const outcomes = await tracing().batch(
        this.options.spanName,
        batch.map(({ trace }) => trace),
        () => this.write(batch.map(({ item }) => item)),
      );
      batch.forEach((each, index) => this.resolveItem(each, outcomes[index]));
    } catch (error) {
      if (batch.length > 1 && this.options.isItemError?.(error)) {
        const half = Math.ceil(batch.length / 2);
        await Promise.all([this.settle(batch.slice(0, half)), this.settle(batch.slice(half))]);
      } else {
        batch.forEach((each) => this.rejectItem(each, error));
      }
    }
    this.forgetSettled();
  }
}
