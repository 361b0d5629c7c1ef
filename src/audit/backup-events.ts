import type { BackupHeader } from '../database/backup/backup-file.js';
import type { KeptRows } from '../database/backup/database-restore.js';
import { cliActor } from './actor.js';
import { appendAuditEvent, type SqlQuery } from './audit-events.repository.js';

/** A statement answering its rows, as the backup commands run them. */
type RunQuery = (sql: string, parameters?: unknown[]) => Promise<unknown[]>;

const asSqlQuery = (query: RunQuery): SqlQuery => query as SqlQuery;

/** What a backup holds, for its record: rows by table, and its schema. */
function contents(header: BackupHeader) {
  return {
    createdAt: header.createdAt,
    migration: header.migration,
    rows: Object.fromEntries(header.tables.map(({ name, rows }) => [name, rows])),
    signedWith: header.signature?.keyId ?? null,
  };
}

/**
 * `backup.created`, once the backup is whole: the backup is named by the moment of its
 * snapshot (its header's createdAt), which its restores name too.
 */
export async function recordBackup(
  query: RunQuery,
  header: BackupHeader,
  { file, bytes }: { file: string; bytes?: number },
): Promise<void> {
  await appendAuditEvent(asSqlQuery(query), {
    event: 'backup.created',
    subjectId: header.createdAt,
    actor: cliActor(),
    details: { file, bytes: bytes ?? null, ...contents(header) },
  });
}

/** `backup.restored`, in the restore's transaction: what was restored, and how. */
export async function recordRestore(
  query: RunQuery,
  { header, kept, verified }: { header: BackupHeader; kept: KeptRows[]; verified: boolean },
  { file, force }: { file: string; force: boolean },
): Promise<void> {
  await appendAuditEvent(asSqlQuery(query), {
    event: 'backup.restored',
    subjectId: header.createdAt,
    actor: cliActor(),
    details: {
      file,
      force,
      verified,
      kept: Object.fromEntries(kept.map(({ table, rows }) => [table, rows])),
      ...contents(header),
    },
  });
}
