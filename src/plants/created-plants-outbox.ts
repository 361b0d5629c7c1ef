import { Injectable } from '@nestjs/common';

/**
 * What other modules write in the very statement that stores new plants (a transactional
 * outbox): each writer is a data-modifying statement reading `created_plants (id, name,
 * tag, trace_context)`, the rows this statement inserted, never a replayed or conflicting
 * plant; `trace_context` is the W3C `traceparent` of the request that created the plant,
 * null when it was not traced. The rows it writes commit with the plants, or not at all,
 * and group commit batches them with the plants. Writers are added while the application
 * starts (onModuleInit), before the first create; the statement is fixed from then on.
 */
@Injectable()
export class CreatedPlantsOutbox {
  private readonly writers: string[] = [];
  private fixed = false;

  add(writer: string): void {
    if (this.fixed) throw new Error('outbox writers must be added before the first create');
    this.writers.push(writer);
  }

  /**
   * The insert's statement with every writer, as `WITH <insert>, outbox_0 AS (…), …`.
   * @param insert the insert as common table expressions (`name AS (…), …`), one of them
   * `created_plants`: a data-modifying one may not be nested in another
   */
  statement(insert: string): string {
    this.fixed = true;
    const writers = this.writers.map((writer, index) => `,\n    outbox_${index} AS (${writer})`);
    return `
    WITH ${insert}${writers.join('')}
    SELECT id::text FROM created_plants`;
  }
}
