import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { BackupTable, SequenceValue } from './backup-catalog.js';
import type { BackupMac, BackupSignature } from './backup-signature.js';

export const BACKUP_FORMAT = 'plant-store-backup';
/** 2: signed (header.signature, and the HMAC as the last line), with header.secretKeyIds. */
export const BACKUP_FORMAT_VERSION = 2;
/** Format 1, of the releases before signing: read, but trusted only when told to. */
const UNSIGNED_FORMAT_VERSION = 1;
/** The FILE that means standard output (backup) or standard input (restore), as `-` does for tar. */
export const STANDARD_STREAM = '-';
/** A header is a few kilobytes; anything longer before its newline is not one. */
const HEADER_LIMIT_BYTES = 1 << 20;
/** The last line, `{"hmac":"…"}`, is some 60 bytes. */
const TRAILER_LIMIT_BYTES = 1024;
const NEWLINE = 0x0a;

/**
 * A backup file is gzip of: this header as one line of JSON, then each table's rows in
 * PostgreSQL's COPY text format (one line a row), in the header's order and numbers, then
 * one line of JSON holding the HMAC of every byte before it (backup-signature.ts).
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
  /** Absent in format 1. */
  signature?: BackupSignature;
  /** The ids of the keys the stored secrets are encrypted with; absent in format 1. */
  secretKeyIds?: string[];
}

export class BackupFileError extends Error {}

export function headerLine(header: BackupHeader): string {
  return `${JSON.stringify(header)}\n`;
}

/** Reads a backup file front to back: its header, then each table's rows in turn, then its HMAC. */
export class BackupReader {
  private readonly chunks: AsyncIterator<Buffer>;
  private rest: Buffer = Buffer.alloc(0);
  private headerBytes?: Buffer;
  private mac?: BackupMac;

  private constructor(
    readonly file: string,
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
      const chunk = await this.next().catch((error: unknown) => {
        if (!(error instanceof BackupFileError)) throw error;
        throw new BackupFileError(`${this.file} is not a Plant Store backup (not gzip)`);
      });
      if (!chunk) break;
      this.rest = Buffer.concat([this.rest, chunk]);
      end = this.rest.indexOf(NEWLINE);
    }
    const header = end < 0 ? undefined : parseHeader(this.rest.subarray(0, end).toString());
    if (!header) throw new BackupFileError(`${this.file} is not a Plant Store backup`);
    if (![UNSIGNED_FORMAT_VERSION, BACKUP_FORMAT_VERSION].includes(header.formatVersion)) {
      throw new BackupFileError(
        `${this.file} is a backup of format ${header.formatVersion}; this release reads formats ${UNSIGNED_FORMAT_VERSION} and ${BACKUP_FORMAT_VERSION}`,
      );
    }
    this.headerBytes = this.rest.subarray(0, end + 1);
    this.rest = this.rest.subarray(end + 1);
    return header;
  }

  /** From here on, every byte read, the header's first, goes into `mac`. */
  authenticate(mac: BackupMac): void {
    mac.update(this.headerBytes!);
    this.mac = mac;
  }

  /** Hands the next `rows` lines to `sink`, a chunk at a time as they are read. */
  async rows(rows: number, sink: (chunk: Buffer, rows: number) => Promise<void>): Promise<void> {
    let left = rows;
    while (left > 0) {
      if (this.rest.length === 0) {
        const chunk = await this.next();
        if (!chunk) throw new BackupFileError(`${this.file} ends early: it is incomplete`);
        this.rest = chunk;
      }
      let end = -1;
      const before = left;
      while (left > 0) {
        const newline = this.rest.indexOf(NEWLINE, end + 1);
        if (newline < 0) break;
        end = newline;
        left -= 1;
      }
      const upTo = left === 0 ? end + 1 : this.rest.length;
      const piece = this.rest.subarray(0, upTo);
      this.mac?.update(piece);
      await sink(piece, before - left);
      this.rest = this.rest.subarray(upTo);
    }
  }

  /**
   * Reads what follows the rows: nothing in format 1; in format 2, the last line, whose
   * text it answers (without its newline). Fails on anything else: more data would be
   * rows no table took.
   */
  async end(header: BackupHeader): Promise<string | undefined> {
    const tooMuch = () => new BackupFileError(`${this.file} holds more rows than its header lists`);
    if (header.formatVersion === UNSIGNED_FORMAT_VERSION) {
      if (this.rest.length > 0 || (await this.next())) throw tooMuch();
      return undefined;
    }
    for (let chunk = await this.next(); chunk; chunk = await this.next()) {
      this.rest = Buffer.concat([this.rest, chunk]);
      if (this.rest.length > TRAILER_LIMIT_BYTES) throw tooMuch();
    }
    if (this.rest.length === 0) {
      throw new BackupFileError(
        `${this.file} ends early: it is incomplete (the HMAC that ends a backup is missing)`,
      );
    }
    const end = this.rest.indexOf(NEWLINE);
    if (end !== this.rest.length - 1) throw tooMuch();
    return this.rest.subarray(0, end).toString();
  }

  close(): void {
    this.stream.destroy();
  }

  /** The next chunk; a gzip stream that is damaged or cut short is named as such. */
  private async next(): Promise<Buffer | undefined> {
    try {
      const { done, value } = await this.chunks.next();
      return done ? undefined : value;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (!code?.startsWith('Z_')) throw error;
      throw new BackupFileError(
        `${this.file} is damaged or cut short: gzip says "${(error as Error).message}"`,
      );
    }
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
