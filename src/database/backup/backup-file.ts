import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { BackupTable, SequenceValue } from './backup-catalog.js';

export const BACKUP_FORMAT = 'plant-store-backup';
export const BACKUP_FORMAT_VERSION = 1;
/** The FILE that means standard output (backup) or standard input (restore), as `-` does for tar. */
export const STANDARD_STREAM = '-';
/** A header is a few kilobytes; anything longer before its newline is not one. */
const HEADER_LIMIT_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * A backup file is gzip of: this header as one line of JSON, then each table's rows in
 * PostgreSQL's COPY text format (one line a row), in the header's order and numbers.
 */
export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  createdAt: string;
  /** The server's `server_version`, for the reader: the data does not depend on it. */
  server: string;
  /** The last migration applied: the schema the rows fit. */
  migration: string;
  tables: Array<BackupTable & { rows: number }>;
  sequences: SequenceValue[];
}

export class BackupFileError extends Error {}

export function headerLine(header: BackupHeader): string {
  return `${JSON.stringify(header)}\n`;
}

/** Reads a backup file front to back: its header, then each table's rows in turn. */
export class BackupReader {
  private readonly chunks: AsyncIterator<Buffer>;
  private rest: Buffer = Buffer.alloc(0);

  private constructor(
    private readonly file: string,
    private readonly stream: Readable,
  ) {
    this.chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** `file`, or standard input when it is STANDARD_STREAM. */
  static open(file: string): BackupReader {
    const input = file === STANDARD_STREAM ? process.stdin : createReadStream(file);
    // Chunks as large as the backup's: fewer, larger COPY messages to the server.
    const gunzip = createGunzip({ chunkSize: 64 * 1024 });
    input.on('error', (error: Error) => gunzip.destroy(error));
    return new BackupReader(file, input.pipe(gunzip));
  }

  async header(): Promise<BackupHeader> {
    let end = this.rest.indexOf(NEWLINE);
    while (end < 0 && this.rest.length < HEADER_LIMIT_BYTES) {
      const chunk = await this.next().catch((error: NodeJS.ErrnoException) => {
        if (!error.code?.startsWith('Z_')) throw error;
        throw new BackupFileError(`${this.file} is not a Plant Store backup (not gzip)`);
      });
      if (!chunk) break;
      this.rest = Buffer.concat([this.rest, chunk]);
      end = this.rest.indexOf(NEWLINE);
    }
    const header = end < 0 ? undefined : parseHeader(this.rest.subarray(0, end).toString());
    if (!header) throw new BackupFileError(`${this.file} is not a Plant Store backup`);
    if (header.formatVersion !== BACKUP_FORMAT_VERSION) {
      throw new BackupFileError(
        `${this.file} is a backup of format ${header.formatVersion}; this release reads format ${BACKUP_FORMAT_VERSION}`,
      );
    }
    this.rest = this.rest.subarray(end + 1);
    return header;
  }

  /** Hands the next `rows` lines to `sink`, a chunk at a time as they are read. */
  async rows(rows: number, sink: (chunk: Buffer) => Promise<void>): Promise<void> {
    let left = rows;
    while (left > 0) {
      if (this.rest.length === 0) {
        const chunk = await this.next();
        if (!chunk) throw new BackupFileError(`${this.file} ends early: it is incomplete`);
        this.rest = chunk;
      }
      let end = -1;
      while (left > 0) {
        const newline = this.rest.indexOf(NEWLINE, end + 1);
        if (newline < 0) break;
        end = newline;
        left -= 1;
      }
      const upTo = left === 0 ? end + 1 : this.rest.length;
      await sink(this.rest.subarray(0, upTo));
      this.rest = this.rest.subarray(upTo);
    }
  }

  /** Fails unless everything was read: more data would be rows no table took. */
  async end(): Promise<void> {
    if (this.rest.length > 0 || (await this.next())) {
      throw new BackupFileError(`${this.file} holds more rows than its header lists`);
    }
  }

  close(): void {
    this.stream.destroy();
  }

  private async next(): Promise<Buffer | undefined> {
    const { done, value } = await this.chunks.next();
    return done ? undefined : value;
  }
}

function parseHeader(line: string): BackupHeader | undefined {
  try {
    const header = JSON.parse(line) as BackupHeader;
    return header?.format === BACKUP_FORMAT ? header : undefined;
  } catch {
    return undefined;
  }
}
