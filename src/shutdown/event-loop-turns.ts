import type { Server } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Node's listen backlog (`server.listen()` asks the kernel for a queue of 511): after
 * this many turns, every connection queued when the wait began has been taken in.
 */
const LISTEN_BACKLOG = 511;

/**
 * Resolves once the kernel holds no connection for `server` that Node has not taken in.
 * Node takes in one connection per event-loop turn, so on a busy loop (a cold start, a
 * starved CPU) fifty clients that connected at once wait fifty turns, however long those
 * take, and closing the listener sooner makes the kernel reset them, sent requests and
 * all. The queue is empty when two turns in a row, each with its I/O phase, took in
 * nothing; under a stream of new connections the wait ends after LISTEN_BACKLOG + 1
 * turns, when all those queued at its start are in. Close the listener right after, in
 * the same turn (awaiting nothing else first).
 */
export async function acceptQueueDrained(server: Server): Promise<void> {
  let quietTurns = 0;
  let takenIn = false;
  const onConnection = () => (takenIn = true);
  server.on('connection', onConnection);
  try {
    // Each wait ends in a turn's check phase, after its I/O phase; the first turn may have
    // been half over when this was called, hence two quiet ones, and one turn more.
    for (let turn = 0; quietTurns < 2 && turn <= LISTEN_BACKLOG; turn++) {
      takenIn = false;
      await nextTurn();
      quietTurns = takenIn ? 0 : quietTurns + 1;
    }
  } finally {
    server.off('connection', onConnection);
  }
}

/** Resolves after `count` turns of the event loop, each with its I/O phase. */
export async function eventLoopTurns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await nextTurn();
}
