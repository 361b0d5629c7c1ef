import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { openNewPrivateFile } from '../../common/files/new-private-file.js';
import { syncDirectoryOf } from '../../common/files/sync-directory.js';
import { type ChainedAuditEvent, hex } from './audit-chain.js';

/**
 * An archive of the audit trail's first rows (`npm run audit -- archive`), gzipped JSON
 * lines: first a header, then one row a line in id order, every field as the chain
 * hashes it and the hashes in hex, so that the file can be checked on its own.
 */
export const ARCHIVE_FORMAT = 'plant-store-audit-archive';
export const ARCHIVE_FORMAT_VERSION = 1;

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  formatVersion: typeof ARCHIVE_FORMAT_VERSION;
  createdAt: string;
  /** The rows are every one from the first on that occurred before this. */
  before: string;
  firstId: string;
  lastId: string;
  rows: number;
  /** What the first row chains from: the genesis, or the last row of the archive before. */
  previousHash: string;
  lastHash: string;
}

/** A line longer than this is no row of the trail (a row is a few hundred bytes). */
const MAX_LINE_CHARACTERS = 1 << 20;
const HASH = /^[0-9a-f]{64}$/;
const DECIMAL = /^-?\d{1,19}$/;

/** A file that is not an archive, or one damaged or cut short: a break in the chain. */
export class ArchiveFileError extends Error {}

/** An archive being written, created new; removed unless finished. */
export interface ArchiveWriter {
  write(line: string): Promise<void>;
  /** Ends the file and makes it durable (the file, then its directory). */
  finish(): Promise<void>;
  /** Removes what was written. */
  discard(): Promise<void>;
}

/**
 * Creates `path` for an archive: new (O_CREAT|O_EXCL: never over another file), never
 * through a symbolic link (O_NOFOLLOW), readable by its owner only (0600).
 */
export async function createArchive(path: string): Promise<ArchiveWriter> {
  let handle;
  try {
    handle = await openNewPrivateFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ArchiveFileError(`${path} exists: an archive is written to a new file only`);
    }
    throw error;
  }
  const gzip = createGzip();
  // The stream owns the file: it syncs it to disk (flush), then closes it, at the end.
  const file = handle.createWriteStream({ flush: true });
  gzip.pipe(file);
  const written = finished(file);
  written.catch(() => undefined);
  return {
    write: async (line) => {
      if (!gzip.write(`${line}\n`)) await once(gzip, 'drain');
    },
    finish: async () => {
      gzip.end();
      await written;
      await syncDirectoryOf(path);
    },
    discard: async () => {
      gzip.destroy();
      file.destroy();
      await written.catch(() => undefined);
      await rm(path, { force: true });
    },
  };
}

export function headerLine(header: ArchiveHeader): string {
  return JSON.stringify(header);
}

export function rowLine(row: ChainedAuditEvent): string {
  return JSON.stringify({
    ...row,
    previousHash: row.previousHash && hex(row.previousHash),
    hash: row.hash && hex(row.hash),
  });
}

/** An archive opened for reading: its header, then its rows, checked against it. */
export interface ArchiveReader {
  header: ArchiveHeader;
  rows: AsyncGenerator<ChainedAuditEvent>;
}

/**
 * Reads the archive at `path` a line at a time (memory stays bounded however many rows),
 * each row checked for shape; after the last, that the rows are those the header names.
 * @throws ArchiveFileError for a file that is not such an archive, or damaged or cut short.
 */
export async function readArchive(path: string): Promise<ArchiveReader> {
  const lines = linesOf(path);
  const first = await lines.next();
  if (first.done) throw new ArchiveFileError(`${path} is empty: not an archive of the audit trail`);
  const header = parseHeader(path, first.value);
  async function* rows(): AsyncGenerator<ChainedAuditEvent> {
    let count = 0;
    let last: ChainedAuditEvent | undefined;
    for await (const line of lines) {
      count++;
      last = parseRow(path, count + 1, line);
      if (count === 1 && hex(last.previousHash!) !== header.previousHash) {
        throw new ArchiveFileError(
          `${path}: its first row does not chain from the hash its header names`,
        );
      }
      yield last;
    }
    if (
      count !== header.rows ||
      last?.id !== header.lastId ||
      hex(last.hash!) !== header.lastHash
    ) {
      throw new ArchiveFileError(
        `${path} holds ${count} row(s)${last ? ` ending at row ${last.id}` : ''}, its header says ${header.rows} ending at row ${header.lastId} with hash ${header.lastHash}: cut short or changed`,
      );
    }
  }
  return { header, rows: rows() };
}

/** The lines of the gunzipped file, each at most MAX_LINE_CHARACTERS long. */
async function* linesOf(path: string): AsyncGenerator<string> {
  const gunzip = createReadStream(path).pipe(createGunzip());
  let pending = '';
  try {
    for await (const chunk of gunzip) {
      pending += (chunk as Buffer).toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      if (pending.length > MAX_LINE_CHARACTERS) {
        throw new ArchiveFileError(`${path} holds a line too long for a row: not an archive`);
      }
      yield* lines;
    }
  } catch (error) {
    if (error instanceof ArchiveFileError || (error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw error;
    }
    throw new ArchiveFileError(`${path} is damaged or cut short: ${(error as Error).message}`);
  } finally {
    gunzip.destroy();
  }
  if (pending !== '')
    throw new ArchiveFileError(`${path} is cut short: its last line is incomplete`);
}

function parseJson(path: string, lineNumber: number, line: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Said below, with the line's number.
  }
  throw new ArchiveFileError(`${path}, line ${lineNumber}: not a JSON object`);
}

function parseHeader(path: string, line: string): ArchiveHeader {
  const header = parseJson(path, 1, line);
  const { format, formatVersion, firstId, lastId, rows, previousHash, lastHash } = header;
  if (format !== ARCHIVE_FORMAT || formatVersion !== ARCHIVE_FORMAT_VERSION) {
    throw new ArchiveFileError(
      `${path} is not an archive of the audit trail (format ${ARCHIVE_FORMAT} ${ARCHIVE_FORMAT_VERSION})`,
    );
  }
  if (
    !isDecimal(firstId) ||
    !isDecimal(lastId) ||
    !Number.isSafeInteger(rows) ||
    !isHash(previousHash) ||
    !isHash(lastHash)
  ) {
    throw new ArchiveFileError(`${path}, line 1: a header without its ids, row count or hashes`);
  }
  return header as unknown as ArchiveHeader;
}

function parseRow(path: string, lineNumber: number, line: string): ChainedAuditEvent {
  const row = parseJson(path, lineNumber, line);
  const { id, occurredAt, event, subjectType, subjectId, actor, actorTokenId, details } = row;
  const { previousHash, hash } = row;
  const texts = [occurredAt, event, subjectType, subjectId, actor, details];
  if (
    !isDecimal(id) ||
    texts.some((text) => typeof text !== 'string') ||
    (actorTokenId !== null && typeof actorTokenId !== 'string') ||
    !isHash(previousHash) ||
    !isHash(hash)
  ) {
    throw new ArchiveFileError(`${path}, line ${lineNumber}: not a row of the audit trail`);
  }
  return {
    id,
    occurredAt: occurredAt as string,
    event: event as string,
    subjectType: subjectType as string,
    subjectId: subjectId as string,
    actor: actor as string,
    actorTokenId,
    details: details as string,
    previousHash: Buffer.from(previousHash, 'hex'),
    hash: Buffer.from(hash, 'hex'),
  };
}

const isDecimal = (value: unknown): value is string =>
  typeof value === 'string' && DECIMAL.test(value);
const isHash = (value: unknown): value is string => typeof value === 'string' && HASH.test(value);
