import type pg from 'pg';

/** One index or constraint of the restored tables, and the statements that drop and make it. */
interface IndexDefinition {
  name: string;
  drop: string;
  create: string;
}

/**
 * The constraints that own an index (primary keys, unique and exclusion constraints) and
 * the foreign keys of `$1`'s tables, each with its definition as pg_dump reads it.
 */
const CONSTRAINTS = `
  SELECT constraint_.conname AS name, constraint_.contype AS type,
    format('ALTER TABLE %s DROP CONSTRAINT %I', constraint_.conrelid::regclass, constraint_.conname) AS drop,
    format('ALTER TABLE %s ADD CONSTRAINT %I %s', constraint_.conrelid::regclass,
           constraint_.conname, pg_get_constraintdef(constraint_.oid)) AS create
  FROM pg_constraint AS constraint_
  JOIN pg_class AS table_ ON table_.oid = constraint_.conrelid
  WHERE table_.relnamespace = current_schema()::regnamespace AND table_.relname = ANY($1)
    AND constraint_.contype IN ('p', 'u', 'x', 'f')
  ORDER BY constraint_.conname`;

/** The other indexes of `$1`'s tables: those no constraint owns. */
const INDEXES = `
  SELECT index_.relname AS name,
    format('DROP INDEX %s', index_.oid::regclass) AS drop,
    pg_get_indexdef(index_.oid) AS create
  FROM pg_index
  JOIN pg_class AS index_ ON index_.oid = pg_index.indexrelid
  JOIN pg_class AS table_ ON table_.oid = pg_index.indrelid
  WHERE table_.relnamespace = current_schema()::regnamespace AND table_.relname = ANY($1)
    AND NOT EXISTS (
      SELECT FROM pg_constraint
      WHERE pg_constraint.conindid = pg_index.indexrelid AND pg_constraint.contype IN ('p', 'u', 'x'))
  ORDER BY index_.relname`;

/**
 * Loading rows into a table with no index, then building each index once over all of
 * them, is several times faster than keeping every index up to date row by row; it is
 * what pg_restore does. In the caller's transaction (so a failed restore leaves every
 * index as it was, and no other session ever sees a table without them): drops the
 * foreign keys, the primary keys and unique constraints, and the other indexes of
 * `tables`, each by the name the migrations gave it, and answers the statements that make
 * them again, as they were, in the order that works: the indexes and the constraints that
 * own one, then the foreign keys, which need the keys they reference and check every row.
 */
export async function dropIndexes(
  client: pg.Client,
  tables: string[],
): Promise<Array<{ name: string; create: string }>> {
  const constraints = (
    await client.query<IndexDefinition & { type: string }>(CONSTRAINTS, [tables])
  ).rows;
  const indexes = (await client.query<IndexDefinition>(INDEXES, [tables])).rows;
  const foreignKeys = constraints.filter(({ type }) => type === 'f');
  const keys = constraints.filter(({ type }) => type !== 'f');
  for (const { drop } of [...foreignKeys, ...keys, ...indexes]) await client.query(drop);
  return [...indexes, ...keys, ...foreignKeys].map(({ name, create }) => ({ name, create }));
}
