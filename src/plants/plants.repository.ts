import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { GroupCommit } from '../database/group-commit.js';
import { postgresPool } from '../database/postgres-pool.js';
import type { Plant } from './entities/plant.entity.js';

/** What an insert found: it stored the plant, or another plant was in the way. */
export type InsertOutcome =
  | { inserted: true }
  /** `existing` is null when the row in the way was committed after the statement began. */
  | { inserted: false; existing: Plant | null };

/**
 * Inserts a batch of plants with distinct ids, in id order (so that two statements with
 * overlapping ids wait for each other instead of deadlocking), skipping ids that exist;
 * answers the ids it stored and the rows that were in the way. Both come from the same
 * statement snapshot, which does not see this statement's own inserts.
 */
const INSERT_BATCH: Omit<pg.QueryConfig, 'values'> = {
  name: 'plants-insert-batch',
  text: `
    WITH input AS (
      SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[]) AS input (id, name, tag)
    ), inserted AS (
      INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM input ORDER BY id
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    )
    SELECT id::text, true AS inserted, NULL AS name, NULL AS tag FROM inserted
    UNION ALL
    SELECT id::text, false, name, tag FROM plants WHERE id = ANY ($1::bigint[])`,
};

const FIND_BY_ID: Omit<pg.QueryConfig, 'values'> = {
  name: 'plants-find-by-id',
  text: 'SELECT name, tag FROM plants WHERE id = $1',
};

interface BatchRow {
  id: string;
  inserted: boolean;
  name: string | null;
  tag: string | null;
}

/**
 * Up to this many creates share a statement. Far above what the connections of one
 * service deliver while a statement is in flight, so in practice never reached.
 */
const MAX_BATCH = 256;
/**
 * Insert statements in flight at once. Measured on 2 cores (bench/README.md): one
 * statement at a time gathers the most creates per commit, and a second lets the next
 * batch travel while PostgreSQL flushes the previous one.
 */
const INSERT_CONCURRENCY = 2;

/** The plants table. Every statement here is one round trip. */
@Injectable()
export class PlantsRepository {
  private readonly pool: pg.Pool;
  private readonly inserts = new GroupCommit<Plant, InsertOutcome>(
    (plants) => this.insertBatch(plants),
    { concurrency: INSERT_CONCURRENCY, maxBatch: MAX_BATCH },
  );

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = postgresPool(dataSource);
  }

  /**
   * Inserts the plant unless a plant with its id exists (`ON CONFLICT DO NOTHING`, so
   * concurrent inserts of one id wait for each other instead of failing). Resolves once
   * the statement carrying it has committed; creates arriving meanwhile share the next
   * statement (group commit).
   */
  insertIfAbsent(plant: Plant): Promise<InsertOutcome> {
    return this.inserts.submit(plant);
  }

  async findById(id: bigint): Promise<Plant | null> {
    const { rows } = await this.pool.query<Pick<Plant, 'name' | 'tag'>>({
      ...FIND_BY_ID,
      values: [id.toString()],
    });
    return rows.length === 0 ? null : { id, ...rows[0] };
  }

  private async insertBatch(plants: Plant[]): Promise<InsertOutcome[]> {
    // One row per id goes to the database: the first of the batch to ask for it.
    const firstById = new Map<bigint, Plant>();
    for (const plant of plants) if (!firstById.has(plant.id)) firstById.set(plant.id, plant);
    const distinct = [...firstById.values()];
    const { rows } = await this.pool.query<BatchRow>({
      ...INSERT_BATCH,
      values: [
        distinct.map(({ id }) => id.toString()),
        distinct.map(({ name }) => name),
        distinct.map(({ tag }) => tag),
      ],
    });
    const inserted = new Set<bigint>();
    const existing = new Map<bigint, Plant>();
    for (const row of rows) {
      const id = BigInt(row.id);
      if (row.inserted) inserted.add(id);
      else existing.set(id, { id, name: row.name!, tag: row.tag });
    }
    return plants.map((plant): InsertOutcome => {
      const first = firstById.get(plant.id)!;
      if (inserted.has(plant.id)) {
        // A later duplicate in the batch finds the first one's row in its way.
        return plant === first ? { inserted: true } : { inserted: false, existing: first };
      }
      return { inserted: false, existing: existing.get(plant.id) ?? null };
    });
  }
}
