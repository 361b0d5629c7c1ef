import type pg from 'pg';

/** TypeORM's record of applied migrations (data-source.ts): made by the migrations, not copied. */
export const MIGRATIONS_TABLE = 'migrations';

export interface BackupTable {
  name: string;
  /** Every stored column (generated ones are computed again), in table order. */
  columns: string[];
}

export interface SequenceValue {
  table: string;
  column: string;
  /** As text: a bigint. */
  lastValue: string;
  isCalled: boolean;
}

/**
 * The tables of the current schema but the migrations' own, each after the tables its
 * foreign keys point to, so that a restore can load them in this order.
 */
export async function listTables(client: pg.Client): Promise<BackupTable[]> {
  const { rows } = await client.query<{ name: string; columns: string[]; parents: string[] }>(
    `SELECT table_class.relname AS name,
       array(SELECT attname FROM pg_attribute
             WHERE attrelid = table_class.oid AND attnum > 0 AND NOT attisdropped
               AND attgenerated = ''
             ORDER BY attnum)::text[] AS columns,
       array(SELECT parent.relname FROM pg_constraint
             JOIN pg_class AS parent ON parent.oid = pg_constraint.confrelid
             WHERE pg_constraint.conrelid = table_class.oid AND pg_constraint.contype = 'f'
               AND pg_constraint.confrelid <> table_class.oid)::text[] AS parents
     FROM pg_class AS table_class
     JOIN pg_namespace ON pg_namespace.oid = table_class.relnamespace
     WHERE pg_namespace.nspname = current_schema() AND table_class.relkind IN ('r', 'p')
       AND NOT table_class.relispartition AND table_class.relname <> $1
     ORDER BY table_class.relname`,
    [MIGRATIONS_TABLE],
  );
  const ordered: BackupTable[] = [];
  const placed = new Set<string>();
  let pending = rows;
  while (pending.length > 0) {
    const ready = pending.filter(({ parents }) => parents.every((parent) => placed.has(parent)));
    if (ready.length === 0)
      throw new Error(`foreign keys in a cycle: ${pending.map((t) => t.name).join(', ')}`);
    for (const { name, columns } of ready) {
      ordered.push({ name, columns });
      placed.add(name);
    }
    pending = pending.filter((table) => !placed.has(table.name));
  }
  return ordered;
}

/** The last migration applied, or undefined on a database no migration has run on. */
export async function lastMigration(client: pg.Client): Promise<string | undefined> {
  const { rows: found } = await client.query<{ exists: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS exists',
    [MIGRATIONS_TABLE],
  );
  if (!found[0].exists) return undefined;
  const { rows } = await client.query<{ name: string }>(
    `SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY timestamp DESC, id DESC LIMIT 1`,
  );
  return rows[0]?.name;
}

/** The sequences behind the tables' serial and identity columns, and where each stands. */
export async function readSequences(
  client: pg.Client,
  tables: BackupTable[],
): Promise<SequenceValue[]> {
  const values: SequenceValue[] = [];
  for (const sequence of await ownedSequences(client, tables)) {
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
      `SELECT last_value::text, is_called FROM ${sequence.name}`,
    );
    values.push({
      table: sequence.table,
      column: sequence.column,
      lastValue: rows[0].last_value,
      isCalled: rows[0].is_called,
    });
  }
  return values;
}

/**
 * Sets each sequence where the backup found it, so new rows get ids after the restored
 * ones; or where it stands, if that is further: a sequence never goes back, so an id the
 * database gave out before a restore (kept rows, log lines, receivers) is never given out
 * again.
 */
export async function writeSequences(
  client: pg.Client,
  tables: BackupTable[],
  values: SequenceValue[],
): Promise<void> {
  const sequences = await ownedSequences(client, tables);
  for (const value of values) {
    const sequence = sequences.find((s) => s.table === value.table && s.column === value.column);
    if (!sequence) throw new Error(`no sequence for ${value.table}.${value.column}`);
    // The next value each would give; pg_sequence_last_value is null before the first.
    await client.query(
      `SELECT setval($1::regclass, greatest(
         $2::bigint + CASE WHEN $3 THEN 1 ELSE 0 END,
         pg_sequence_last_value($1::regclass) + 1), false)`,
      [sequence.name, value.lastValue, value.isCalled],
    );
  }
}

async function ownedSequences(
  client: pg.Client,
  tables: BackupTable[],
): Promise<Array<{ table: string; column: string; name: string }>> {
  const { rows } = await client.query<{ table: string; column: string; name: string }>(
    `SELECT owned.table, owned.column, owned.name
     FROM (SELECT item.table, item.column,
             pg_get_serial_sequence(quote_ident(item.table), item.column) AS name
           FROM jsonb_to_recordset($1::jsonb) AS item("table" text, "column" text)) AS owned
     WHERE owned.name IS NOT NULL
     ORDER BY owned.table, owned.column`,
    [
      JSON.stringify(
        tables.flatMap(({ name, columns }) => columns.map((column) => ({ table: name, column }))),
      ),
    ],
  );
  return rows;
}
