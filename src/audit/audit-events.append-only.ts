import type { AppendOnlyTable } from '../database/backup/database-restore.js';

/**
 * The audit trail never loses a row: `restore --force` keeps the rows newer than the
 * backup, after the backup's, and refuses to erase any other (src/database/backup).
 */
export const AUDIT_EVENTS_APPEND_ONLY: AppendOnlyTable = { table: 'audit_events', key: 'id' };
