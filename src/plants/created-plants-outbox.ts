import { Injectable } from '@nestjs/common';

/**
 * What other modules write in the very statement that stores new plants (a transactional
 * outbox): each writer is a data-modifying statement reading `created_plants (id, name,
 * tag)`, the rows this statement inserted, never a replayed or conflicting plant. The
 * rows it writes commit with the plants, or not at all, and group commit batches them
 * with the plants. Writers are added while the application starts (onModuleInit), before
 * the first create; the statement is fixed from then on.
 */
@Injectable()
export class CreatedPlantsOutbox {
  private readonly writers: string[] = [];
  private fixed = false;

  add(writer: string): void {
    if (this.fixed) throw new Error('outbox writers must be added before the first create');
    this.writers.push(writer);
  }

  /** The insert's statement with every writer, as `WITH created_plants AS (…), …`. */
  statement(insertReturningCreated: string): string {
    this.fixed = true;
    const writers = this.writers.map((writer, index) => `,\n    outbox_${index} AS (${writer})`);
    return `
    WITH created_plants AS (${insertReturningCreated})${writers.join('')}
    SELECT id::text FROM created_plants`;
  }
}
