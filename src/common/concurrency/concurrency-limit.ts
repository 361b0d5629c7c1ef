/**
 * Runs at most `limit` tasks at once; the others wait their turn, first come first
 * served, except that an `urgent` task goes ahead of those waiting.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>, urgent = false): Promise<T> {
    if (this.running < this.limit) this.running++;
    else
      await new Promise<void>((start) =>
        urgent ? this.waiting.unshift(start) : this.waiting.push(start),
      );
    try {
      return await task();
    } finally {
      // The finished task's slot passes straight to the next one waiting.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
