/** Where progress goes: a terminal (`isTTY`) gets one line redrawn in place. */
export interface ProgressStream {
  isTTY?: boolean;
  /** The terminal's width: a longer line would wrap, and the redraw would leave its head. */
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** Where the line goes (process.stderr: standard output may be the data itself). */
  stream?: ProgressStream;
  /**
   * Off a terminal: each plain line goes here (the stream, a line at a time, by default),
   * at most once every `plainLineEveryMs`. Work shorter than that says nothing.
   */
  plainLine?: (line: string) => void;
  /** Off a terminal: how often a plain line is written; 0 says nothing at all. */
  plainLineEveryMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/** Where the work stands: `done` of `total` things of `unit`, and what it is doing now. */
export interface ProgressUpdate {
  /** What the work is doing now, e.g. "table 2 of 6, plants". */
  step: string;
  done: number;
  total?: number;
  /** What `done` counts, e.g. "rows"; the rate is measured again when it changes. */
  unit: string;
}

/** Off a terminal, a line every half minute: a job's log shows the work going on. */
export const PLAIN_LINE_EVERY_MS = 30_000;
/** A terminal's line is redrawn at most this often, but at once for a new step. */
const REDRAW_EVERY_MS = 200;
/** A rate measured over less than this says little. */
const RATE_AFTER_MS = 1_000;
/** Back to the line's start, then erase it. */
const REDRAW = '\r\x1b[K';

/**
 * The progress of work that can take minutes (a backup, a restore, a migration's index
 * build): what it does, how much is done, the rate and the time left. On a terminal, one
 * line redrawn in place and erased when the work ends; otherwise a plain line now and
 * then (or nothing), so that logs hold no control characters.
 */
export class ProgressReporter {
  private readonly stream: ProgressStream;
  private readonly plainLine: (line: string) => void;
  private readonly plainLineEveryMs: number;
  private readonly now: () => number;
  private lastWritten: number;
  /** Where the rate is measured from: the first update of the current unit. */
  private base?: { at: number; done: number; unit: string };
  private drawn = false;
  private lastStep?: string;

  constructor(
    /** Whose progress: the first word of each line. */
    private readonly label: string,
    options: ProgressOptions = {},
  ) {
    this.stream = options.stream ?? process.stderr;
    this.plainLine = options.plainLine ?? ((line) => this.stream.write(`${line}\n`));
    this.plainLineEveryMs = options.plainLineEveryMs ?? PLAIN_LINE_EVERY_MS;
    this.now = options.now ?? Date.now;
    this.lastWritten = this.now();
  }

  update(update: ProgressUpdate): void {
    const at = this.now();
    if (!this.base || this.base.unit !== update.unit || update.done < this.base.done) {
      this.base = { at, done: update.done, unit: update.unit };
    }
    const newStep = update.step !== this.lastStep;
    this.lastStep = update.step;
    if (this.stream.isTTY) {
      if (at - this.lastWritten < REDRAW_EVERY_MS && this.drawn && !newStep) return;
      this.stream.write(`${REDRAW}${this.fit(this.describe(update, at))}`);
      this.drawn = true;
    } else {
      if (this.plainLineEveryMs <= 0 || at - this.lastWritten < this.plainLineEveryMs) return;
      this.plainLine(this.describe(update, at));
    }
    this.lastWritten = at;
  }

  /** The work is over: a terminal's line is erased, for the command's own last line. */
  finish(): void {
    if (this.drawn) this.stream.write(REDRAW);
    this.drawn = false;
  }

  /** E.g. `restore: table 2 of 6, plants: 450,000 of 1,000,000 rows (45%), 310,000 rows/s, 2 s left`. */
  private describe({ step, done, total, unit }: ProgressUpdate, at: number): string {
    const parts = [`${count(done)}${total === undefined ? '' : ` of ${count(total)}`} ${unit}`];
    if (total) parts[0] += ` (${Math.floor((100 * done) / total)}%)`;
    const base = this.base!;
    const elapsed = at - base.at;
    const rate = elapsed >= RATE_AFTER_MS ? ((done - base.done) * 1000) / elapsed : undefined;
    if (rate !== undefined) {
      parts.push(`${count(Math.round(rate))} ${unit}/s`);
      if (total !== undefined && rate > 0) parts.push(`${duration((total - done) / rate)} left`);
    }
    return `${this.label}: ${step}: ${parts.join(', ')}`;
  }

  /** Cut to the terminal's width, less a column, so the line never wraps. */
  private fit(line: string): string {
    const width = this.stream.columns;
    return width && line.length >= width ? `${line.slice(0, Math.max(width - 2, 0))}…` : line;
  }
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** `45 s`, `3 min 20 s`, `1 h 5 min`. */
function duration(seconds: number): string {
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
}
