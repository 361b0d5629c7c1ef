export interface BatchingLimits {
  /** Statements in flight at once; further items wait and go out together. */
  concurrency: number;
  /** Items in one statement at most. */
  maxBatch: number;
}

interface Waiting<Item, Outcome> {
  item: Item;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/**
 * Gathers the items submitted while `concurrency` statements are in flight, and sends them
 * together in the next statement: group commit for inserts, and the same for reads. An
 * item submitted when a statement is free goes out at once, alone: nothing ever waits for
 * company. Each item is settled only when the statement that carried it has finished
 * (committed, for an autocommitted write), with its own outcome, or with that
 * statement's error. A statement sent after an item was submitted sees everything
 * committed before, so batching never serves a stale read.
 */
export class BatchingQueue<Item, Outcome> {
  private readonly waiting: Waiting<Item, Outcome>[] = [];
  private inFlight = 0;

  /**
   * @param write writes a batch in one statement; it answers one outcome per item, in order.
   */
  constructor(
    private readonly write: (items: Item[]) => Promise<Outcome[]>,
    private readonly limits: BatchingLimits,
  ) {}

  submit(item: Item): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.inFlight < this.limits.concurrency) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting.splice(0, this.limits.maxBatch);
    this.inFlight++;
    // `write` is called inside the promise chain, so that even a synchronous throw
    // settles this batch instead of escaping.
    Promise.resolve(batch.map(({ item }) => item))
      .then(this.write)
      .then(
        (outcomes) => batch.forEach(({ resolve }, index) => resolve(outcomes[index])),
        (error: unknown) => batch.forEach(({ reject }) => reject(error)),
      )
      .finally(() => {
        this.inFlight--;
        if (this.waiting.length > 0) this.flush();
      });
  }
}
