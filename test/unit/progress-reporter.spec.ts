import { describe, expect, it } from 'vitest';
import { ProgressReporter } from '../../src/common/progress/progress-reporter.js';

/** A stream that keeps what is written, a terminal or not, and a clock moved by hand. */
function fakes(isTTY: boolean, columns = 120) {
  const written: string[] = [];
  let now = 1_000_000;
  return {
    stream: { isTTY, columns, write: (text: string) => written.push(text) },
    written,
    now: () => now,
    advance: (ms: number) => (now += ms),
  };
}

const rows = (done: number) => ({
  step: 'table 2 of 6, plants',
  done,
  total: 1_000_000,
  unit: 'rows',
});

describe('ProgressReporter', () => {
  it('on a terminal, redraws one line in place: what it does, how much, the rate and the time left', () => {
    const { stream, written, now, advance } = fakes(true);
    const progress = new ProgressReporter('restore', { stream, now });
    progress.update(rows(0));
    advance(2_000);
    progress.update(rows(500_000));
    progress.finish();
    expect(written).toEqual([
      '\r\x1b[Krestore: table 2 of 6, plants: 0 of 1,000,000 rows (0%)',
      '\r\x1b[Krestore: table 2 of 6, plants: 500,000 of 1,000,000 rows (50%), 250,000 rows/s, 2 s left',
      '\r\x1b[K',
    ]);
  });

  it('on a terminal, redraws at most five times a second, but at once for a new step', () => {
    const { stream, written, now, advance } = fakes(true);
    const progress = new ProgressReporter('backup', { stream, now });
    for (let done = 0; done < 100; done++) {
      progress.update(rows(done * 1000));
      advance(10);
    }
    expect(written).toHaveLength(5);
    progress.update({ ...rows(100_000), step: 'table 3 of 6, tokens' });
    expect(written.at(-1)).toMatch(/^\r\x1b\[Kbackup: table 3 of 6, tokens: /);
  });

  it('on a terminal, cuts the line to its width, so that it never wraps', () => {
    const { stream, written, now } = fakes(true, 30);
    new ProgressReporter('restore', { stream, now }).update(rows(1));
    expect(written).toEqual(['\r\x1b[Krestore: table 2 of 6, plant…']);
  });

  it('measures the rate again when what it counts changes (rows, then index blocks)', () => {
    const { stream, written, now, advance } = fakes(true);
    const progress = new ProgressReporter('migration', { stream, now });
    progress.update({ step: 'scanning', done: 0, total: 100, unit: 'blocks' });
    advance(4_000);
    progress.update({ step: 'scanning', done: 80, total: 100, unit: 'blocks' });
    advance(1_000);
    progress.update({ step: 'sorting', done: 10, total: 1000, unit: 'tuples' });
    advance(1_000);
    progress.update({ step: 'sorting', done: 510, total: 1000, unit: 'tuples' });
    expect(written.slice(1)).toEqual([
      '\r\x1b[Kmigration: scanning: 80 of 100 blocks (80%), 20 blocks/s, 1 s left',
      '\r\x1b[Kmigration: sorting: 10 of 1,000 tuples (1%)',
      '\r\x1b[Kmigration: sorting: 510 of 1,000 tuples (51%), 500 tuples/s, 1 s left',
    ]);
  });

  it('off a terminal, says nothing of work shorter than its interval, and writes nothing to erase', () => {
    const { stream, written, now, advance } = fakes(false);
    const progress = new ProgressReporter('backup', { stream, now, plainLineEveryMs: 30_000 });
    progress.update(rows(0));
    advance(29_000);
    progress.update(rows(900_000));
    progress.finish();
    expect(written).toEqual([]);
  });

  it('off a terminal, writes a plain line (no control characters) once per interval', () => {
    const { stream, written, now, advance } = fakes(false);
    const progress = new ProgressReporter('backup', { stream, now, plainLineEveryMs: 30_000 });
    progress.update(rows(0));
    for (let second = 1; second <= 65; second++) {
      advance(1_000);
      progress.update(rows(second * 10_000));
    }
    progress.finish();
    expect(written).toEqual([
      'backup: table 2 of 6, plants: 300,000 of 1,000,000 rows (30%), 10,000 rows/s, 1 min 10 s left\n',
      'backup: table 2 of 6, plants: 600,000 of 1,000,000 rows (60%), 10,000 rows/s, 40 s left\n',
    ]);
  });

  it('off a terminal, hands its lines to a logger when given one, and is quiet with an interval of 0', () => {
    const { stream, written, now, advance } = fakes(false);
    const logged: string[] = [];
    const progress = new ProgressReporter('migration', {
      stream,
      now,
      plainLine: (line) => logged.push(line),
      plainLineEveryMs: 1_000,
    });
    advance(1_000);
    progress.update({ step: 'building plants_tag_idx', done: 5, unit: 'blocks' });
    expect(logged).toEqual(['migration: building plants_tag_idx: 5 blocks']);
    const quiet = new ProgressReporter('backup', { stream, now, plainLineEveryMs: 0 });
    advance(60_000);
    quiet.update(rows(1));
    expect(written).toEqual([]);
  });
});
