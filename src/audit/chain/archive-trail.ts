import { resolve } from 'node:path';
import type pg from 'pg';
import type { Actor } from '../actor.js';
import {
  appendAuditEvent,
  ARCHIVED_SUBJECT_ID,
  archivableRows,
  chainedEvents,
  clientQuery,
  lockChain,
  removeArchivedRows,
  tableOrigin,
} from '../audit-events.repository.js';
import { type ChainedAuditEvent, hex } from './audit-chain.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  type ArchiveHeader,
  type ArchiveWriter,
  createArchive,
  headerLine,
  rowLine,
} from './archive-file.js';
import { ChainVerifier } from './chain-verifier.js';

/** An archive that cannot be made as asked; the table is as it was, no file is left. */
export class ArchiveRefusedError extends Error {}

export interface ArchivedTrail {
  header: ArchiveHeader;
  /** The `audit_trail.archived` row, which says where the table's chain now begins. */
  anchor: ChainedAuditEvent;
}

/**
 * Moves the rows from the first on that all occurred before `before` into a new file,
 * then out of the table, as its owner: first the rows are read in one snapshot, checked
 * link by link as verify does (a broken chain is not archived), and written and synced;
 * then, in one transaction under the chain's lock, they are deleted (the owner's
 * `archive` maintenance) and an `audit_trail.archived` row records the last one's id and
 * hash, from which the table's chain goes on. Undefined when no row is that old.
 */
export async function archiveTrail(
  client: pg.ClientBase,
  { before, file, actor }: { before: Date; file: string; actor: Actor },
): Promise<ArchivedTrail | undefined> {
  const archive = await createArchive(file);
  try {
    const header = await writeArchive(client, archive, before);
    if (!header) {
      await archive.discard();
      return undefined;
    }
    await archive.finish();
    const anchor = await removeArchived(client, header, file, actor);
    return { header, anchor };
  } catch (error) {
    await archive.discard();
    throw error;
  }
}

/** Writes the rows to archive, checked as verify checks them, in one snapshot. */
async function writeArchive(
  client: pg.ClientBase,
  writer: ArchiveWriter,
  olderThan: Date,
): Promise<ArchiveHeader | undefined> {
  const query = clientQuery(client);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const rows = await archivableRows(query, olderThan);
    if (!rows) return undefined;
    const [ends] = await query<{ previousHash: Buffer; lastHash: Buffer }>(
      `SELECT (SELECT previous_hash FROM audit_events WHERE id = $1) AS "previousHash",
              (SELECT hash FROM audit_events WHERE id = $2) AS "lastHash"`,
      [rows.firstId, rows.lastId],
    );
    const header: ArchiveHeader = {
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      createdAt: new Date().toISOString(),
      before: olderThan.toISOString(),
      ...rows,
      previousHash: hex(ends.previousHash ?? Buffer.alloc(0)),
      lastHash: hex(ends.lastHash ?? Buffer.alloc(0)),
    };
    await writer.write(headerLine(header));
    const verifier = new ChainVerifier(await tableOrigin(query));
    for await (const row of chainedEvents(query, { throughId: rows.lastId })) {
      const problem = verifier.check(row);
      if (problem) {
        throw new ArchiveRefusedError(
          `the chain breaks in the rows to archive (${problem}): nothing archived; see npm run audit -- verify`,
        );
      }
      await writer.write(rowLine(row));
    }
    return header;
  } finally {
    await client.query('ROLLBACK');
  }
}

/** Deletes the archived rows and records the archive, in one transaction. */
async function removeArchived(
  client: pg.ClientBase,
  header: ArchiveHeader,
  file: string,
  actor: Actor,
): Promise<ChainedAuditEvent> {
  const query = clientQuery(client);
  await client.query('BEGIN');
  try {
    await lockChain(query);
    const removed = await removeArchivedRows(query, header);
    if (removed.rows !== header.rows || removed.lastHash?.toString('hex') !== header.lastHash) {
      throw new ArchiveRefusedError(
        `rows ${header.firstId} to ${header.lastId} changed while they were archived: nothing archived`,
      );
    }
    const { before, firstId, lastId, rows, previousHash, lastHash } = header;
    const anchor = await appendAuditEvent(query, {
      event: 'audit_trail.archived',
      subjectId: ARCHIVED_SUBJECT_ID,
      actor,
      details: { before, firstId, lastId, rows, previousHash, lastHash, file: resolve(file) },
    });
    await client.query('COMMIT');
    return anchor;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
