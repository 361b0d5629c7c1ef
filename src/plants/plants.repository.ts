import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type pg from 'pg';
import type { Repository } from 'typeorm';
import type { Key } from '../common/pagination/keyset.js';
import { tracing } from '../common/tracing/tracing.js';
import { AppConfig } from '../config/app-config.js';
import { BatchingQueue } from '../database/batching-queue.js';
import { databaseAnswerLimitMs } from '../database/data-source.js';
import { poolerSafe, type Statement } from '../database/pooler-safe-statement.js';
import { isDataException } from '../database/database-errors.js';
import { postgresPool } from '../database/postgres-pool.js';
import { retryRefused } from '../database/retry-refused.js';
import { runStatement } from '../database/run-statement.js';
import { CreatedPlantsOutbox } from './created-plants-outbox.js';
import { Plant } from './entities/plant.entity.js';
import { PLANTS_BY_ID } from './plants-keyset.js';

/**
 * Inserts a batch of plants with distinct ids, skipping those whose id exists, and answers
 * the rows it stored as `created_plants` for the outbox's writers (see CreatedPlantsOutbox),
 * without trace context: the statement of a process that does not trace. Rows go in id
 * order, so that two statements with overlapping ids wait for each other instead of
 * deadlocking.
 */
const INSERT_BATCH = {
  name: 'plants-insert-batch',
  text: `
    created_plants AS (
      INSERT INTO plants (id, name, tag)
      SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[]) AS input (id, name, tag)
      ORDER BY id
      ON CONFLICT (id) DO NOTHING
      RETURNING id, name, tag, NULL::text AS trace_context
    )`,
};
/**
 * INSERT_BATCH in a process that traces: the rows of traced requests with their trace
 * context ($4 ids, $5 contexts), joined to what was inserted (an INSERT's RETURNING sees
 * only the row it wrote). Only those rows are sent and joined: at a production ratio a
 * few of a batch, none in a batch of untraced requests. Joining every input row instead
 * cost PostgreSQL 5 to 17 % more per statement of 16 to 256 rows.
 */
const INSERT_TRACED_BATCH = {
  name: 'plants-insert-traced-batch',
  text: `
    inserted AS (
      INSERT INTO plants (id, name, tag)
      SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[]) AS input (id, name, tag)
      ORDER BY id
      ON CONFLICT (id) DO NOTHING
      RETURNING id, name, tag
    ), created_plants AS (
      SELECT inserted.*, traced.trace_context
      FROM inserted
      LEFT JOIN unnest($4::bigint[], $5::text[]) AS traced (id, trace_context) USING (id)
    )`,
};
/**
 * A batch of one, as its own statement: what a client sending one request at a time
 * always sends. No arrays to build, send and unnest (for reads, FIND_BY_ID, that was
 * about 40 % of PostgreSQL's work per request; docs/performance.md). Its trace context is
 * $4, null when not traced.
 */
const INSERT_ONE = {
  name: 'plants-insert-one',
  text: `
    created_plants AS (
      INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3)
      ON CONFLICT (id) DO NOTHING
      RETURNING id, name, tag, $4::text AS trace_context
    )`,
};

/** The plants with these ids (those that exist). */
const FIND_BY_IDS = {
  name: 'plants-find-by-ids',
  text: 'SELECT id::text, name, tag FROM plants WHERE id = ANY ($1::bigint[])',
};
/** A read batch of one: see INSERT_ONE. */
const FIND_BY_ID = {
  name: 'plants-find-by-id',
  text: 'SELECT name, tag FROM plants WHERE id = $1',
};

/** Up to this many requests share a statement: bounds its size when very many arrive at once. */
const MAX_BATCH = 256;
/**
 * Statements in flight at once, for inserts and for reads each. With one, every request
 * waits for the statement before it; with two, a request arriving while one statement is
 * in flight goes out at once, and the others gather behind both. In A/B runs on 2 cores
 * (noisy; bench/README.md) two gave the better p99 at 16 and 64 connections.
 */
const CONCURRENCY = 2;

/** A plant to insert, and the W3C `traceparent` of the request creating it (null: untraced). */
interface PlantToInsert extends Plant {
  traceContext: string | null;
}

export interface PlantsPageQuery {
  /** Only plants after this key (PLANTS_BY_ID); undefined: from the first plant. */
  after?: Key;
  /** Only plants with exactly this tag. */
  tag?: string;
  count: number;
}

/**
 * The plants table. Every statement here is one round trip. The hot ones (create, read
 * by id) are pg prepared statements shared by the requests that arrive together (see
 * BatchingQueue); the rest go through TypeORM.
 */
@Injectable()
export class PlantsRepository implements OnApplicationBootstrap {
  private readonly pool: pg.Pool;
  private readonly config: Pick<AppConfig, 'throughTransactionPooler'>;
  /** This process traces: a batch carries each request's trace context. */
  private readonly traced = tracing().enabled;
  private insertBatchStatement!: Statement;
  private insertOneStatement!: Statement;
  private readonly findByIdsStatement: Statement;
  private readonly findByIdStatement: Statement;
  private readonly inserts: BatchingQueue<PlantToInsert, boolean>;
  private readonly reads: BatchingQueue<bigint, Plant | null>;

  constructor(
    @InjectRepository(Plant) private readonly plants: Repository<Plant>,
    private readonly outbox: CreatedPlantsOutbox,
    config: AppConfig,
  ) {
    this.pool = postgresPool(plants.manager.dataSource);
    this.config = config;
    this.findByIdsStatement = poolerSafe(FIND_BY_IDS, config);
    this.findByIdStatement = poolerSafe(FIND_BY_ID, config);
    // A request waits for the database no longer in a batch than on its own.
    const batching = {
      concurrency: CONCURRENCY,
      maxBatch: MAX_BATCH,
      deadlineMs: databaseAnswerLimitMs(config),
    };
    this.inserts = new BatchingQueue((plants) => this.insertBatch(plants), {
      ...batching,
      spanName: 'plants insert batch',
      isItemError: isDataException,
    });
    this.reads = new BatchingQueue((ids) => this.findBatch(ids), {
      ...batching,
      spanName: 'plants read batch',
    });
  }

  /** Once every module has added its outbox writers (in onModuleInit), before any request. */
  onApplicationBootstrap(): void {
    this.insertBatchStatement = this.insertStatement(
      this.traced ? INSERT_TRACED_BATCH : INSERT_BATCH,
    );
    this.insertOneStatement = this.insertStatement(INSERT_ONE);
  }

  /** An insert with the outbox's writers (see CreatedPlantsOutbox), named unless pooled. */
  private insertStatement({ name, text }: Statement): Statement {
    return poolerSafe({ name, text: this.outbox.statement(text) }, this.config);
  }

  /**
   * Inserts the plant unless a plant with its id exists (`ON CONFLICT DO NOTHING`, so
   * concurrent inserts of one id wait for each other instead of failing). Resolves once
   * the statement carrying it has committed; creates arriving meanwhile share the next
   * statement (group commit). The request's trace is taken here, for what the outbox
   * writes: the statement serves many requests and runs in none of their traces.
   * @returns true when this call stored the plant.
   */
  insertIfAbsent(plant: Plant): Promise<boolean> {
    return this.inserts.submit({ ...plant, traceContext: tracing().traceparent() });
  }

  /** Reads arriving while others are in flight share the next statement. */
  findById(id: bigint): Promise<Plant | null> {
    return this.reads.submit(id);
  }

  private async insertBatch(plants: PlantToInsert[]): Promise<boolean[]> {
    if (plants.length === 1) return [await this.insertOne(plants[0])];
    // One row per id goes to the database: the first of the batch to ask for it. A later
    // one finds that row in its way, as if it had come after.
    const firstById = new Map<bigint, PlantToInsert>();
    for (const plant of plants) if (!firstById.has(plant.id)) firstById.set(plant.id, plant);
    const distinct = [...firstById.values()];
    const values = [
      distinct.map(({ id }) => id.toString()),
      distinct.map(({ name }) => name),
      distinct.map(({ tag }) => tag),
    ];
    if (this.traced) {
      const traced = distinct.filter(({ traceContext }) => traceContext !== null);
      values.push(
        traced.map(({ id }) => id.toString()),
        traced.map(({ traceContext }) => traceContext),
      );
    }
    // One statement, which a refusal leaves undone: safe to send again.
    const { rows } = await retryRefused(() =>
      runStatement<{ id: string }>(this.pool, this.insertBatchStatement, values),
    );
    const inserted = new Set(rows.map(({ id }) => BigInt(id)));
    return plants.map((plant) => inserted.has(plant.id) && firstById.get(plant.id) === plant);
  }

  private async insertOne({ id, name, tag, traceContext }: PlantToInsert): Promise<boolean> {
    const { rowCount } = await retryRefused(() =>
      runStatement(this.pool, this.insertOneStatement, [id.toString(), name, tag, traceContext]),
    );
    return rowCount === 1;
  }

  private async findBatch(ids: bigint[]): Promise<(Plant | null)[]> {
    if (ids.length === 1) return [await this.findOne(ids[0])];
    const { rows } = await runStatement<{ id: string; name: string; tag: string | null }>(
      this.pool,
      this.findByIdsStatement,
      [ids.map(String)],
    );
    const found = new Map(rows.map((row) => [BigInt(row.id), row]));
    return ids.map((id) => {
      const row = found.get(id);
      return row ? { id, name: row.name, tag: row.tag } : null;
    });
  }

  private async findOne(id: bigint): Promise<Plant | null> {
    const { rows } = await runStatement<{ name: string; tag: string | null }>(
      this.pool,
      this.findByIdStatement,
      [id.toString()],
    );
    return rows.length === 0 ? null : { id, name: rows[0].name, tag: rows[0].tag };
  }

  /** Up to `count` plants by ascending id: keyset pagination, stable under inserts and deletes. */
  findPage({ after, tag, count }: PlantsPageQuery): Promise<Plant[]> {
    const query = this.plants.createQueryBuilder('plant');
    if (tag !== undefined) query.andWhere('plant.tag = :tag', { tag });
    return PLANTS_BY_ID.page(query, after, count).getMany();
  }

  /** @returns false when there is no plant with this id. */
  async replace({ id, name, tag }: Plant): Promise<boolean> {
    const result = await retryRefused(() => this.plants.update({ id }, { name, tag }));
    return result.affected === 1;
  }

  /** @returns false when there is no plant with this id. */
  async delete(id: bigint): Promise<boolean> {
    const result = await retryRefused(() => this.plants.delete({ id }));
    return result.affected === 1;
  }
}
