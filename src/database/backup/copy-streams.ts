import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type pg from 'pg';

/**
 * What a COPY needs of `pg`'s connection. `pg` runs COPY through its "submittable" query
 * protocol (the one pg-cursor and pg-copy-streams use): it hands the connection to the
 * query and calls its `handle…` methods as the server's messages arrive.
 */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  stream: Socket;
}

const BATCH_BYTES = 64 * 1024;

interface CommandComplete {
  text: string;
}

/** The row count of a `COPY n` command tag. */
function copiedRows({ text }: CommandComplete): number {
  return Number(text.split(' ')[1]);
}

/**
 * `COPY … TO STDOUT` as a readable stream of the server's bytes. Memory stays bounded:
 * while the reader lags, the connection's socket is paused, and the server waits.
 */
export class CopyOut extends Readable {
  rows = 0;
  private connection: CopyConnection | undefined;
  private batch = Buffer.allocUnsafe(BATCH_BYTES);
  private batchBytes = 0;
  private failure: Error | undefined;

  constructor(private readonly text: string) {
    super();
  }

  /** Starts it on `client`; its data and its end come through the stream. */
  static start(client: pg.Client, text: string): CopyOut {
    const copy = new CopyOut(text);
    client.query(copy as unknown as pg.Submittable);
    return copy;
  }

  submit(connection: CopyConnection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  /**
   * The server sends a message a row: they are gathered into chunks of BATCH_BYTES, since
   * a stream write a row (a gzip call each) made a backup 30 times slower than pg_dump.
   * Each is copied as it comes: it is a view of the parser's buffer, which later data
   * overwrites.
   */
  handleCopyData({ chunk }: { chunk: Buffer }): void {
    if (this.batchBytes + chunk.length > BATCH_BYTES) this.flush();
    if (chunk.length > BATCH_BYTES) {
      this.pushData(Buffer.from(chunk));
      return;
    }
    chunk.copy(this.batch, this.batchBytes);
    this.batchBytes += chunk.length;
  }

  private flush(): void {
    if (this.batchBytes === 0) return;
    const data = this.batch.subarray(0, this.batchBytes);
    this.batch = Buffer.allocUnsafe(BATCH_BYTES);
    this.batchBytes = 0;
    this.pushData(data);
  }

  private pushData(data: Buffer): void {
    if (!this.push(data)) this.connection?.stream.pause();
  }

  handleCommandComplete(message: CommandComplete): void {
    this.rows = copiedRows(message);
  }

  handleError(error: Error): void {
    this.failure = error;
    this.destroy(error);
  }

  handleReadyForQuery(): void {
    if (this.failure) return;
    this.flush();
    this.push(null);
  }

  override _read(): void {
    this.connection?.stream.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The rest of the server's answer is still read, and dropped, so the session stays usable.
    this.connection?.stream.resume();
    callback(error);
  }
}

/**
 * `COPY … FROM STDIN`: `write` sends bytes and resolves once the socket takes more, `end`
 * resolves with the rows the server stored, or rejects with its error.
 */
export class CopyIn {
  private connection: CopyConnection | undefined;
  private failure: Error | undefined;
  private rows: number | undefined;
  private readonly accepting: Promise<void>;
  private accepted!: () => void;
  private readonly finished: Promise<number>;
  private settle!: { resolve: (rows: number) => void; reject: (error: Error) => void };

  private constructor(private readonly text: string) {
    this.accepting = new Promise((resolve) => (this.accepted = resolve));
    this.finished = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // Awaited by `end`; a failure before then is reported by the next `write`.
    this.finished.catch(() => undefined);
  }

  static start(client: pg.Client, text: string): CopyIn {
    const copy = new CopyIn(text);
    client.query(copy as unknown as pg.Submittable);
    return copy;
  }

  submit(connection: CopyConnection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyInResponse(): void {
    this.accepted();
  }

  handleCommandComplete(message: CommandComplete): void {
    this.rows = copiedRows(message);
  }

  handleError(error: Error): void {
    this.failure ??= error;
    // The server may refuse the COPY before it ever accepts data.
    this.accepted();
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    if (this.failure) this.settle.reject(this.failure);
    else this.settle.resolve(this.rows ?? 0);
  }

  async write(chunk: Buffer): Promise<void> {
    await this.accepting;
    if (this.failure) throw this.failure;
    const socket = this.connection!.stream;
    this.connection!.sendCopyFromChunk(chunk);
    if (socket.writableNeedDrain) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    }
  }

  async end(): Promise<number> {
    await this.accepting;
    if (!this.failure) this.connection!.endCopyFrom();
    return this.finished;
  }
}
