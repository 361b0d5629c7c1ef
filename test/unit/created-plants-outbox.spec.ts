import { describe, expect, it } from 'vitest';
import { CreatedPlantsOutbox } from '../../src/plants/created-plants-outbox.js';

const INSERT =
  "created_plants AS (INSERT INTO plants (id) VALUES (1) RETURNING id, name, tag, 'tp' AS trace_context)";

describe('CreatedPlantsOutbox', () => {
  it('answers the created ids from the insert alone when no module writes with it', () => {
    const statement = new CreatedPlantsOutbox().statement(INSERT);
    expect(statement.replace(/\s+/g, ' ').trim()).toBe(
      `WITH ${INSERT} SELECT id::text FROM created_plants`,
    );
  });

  it("runs each module's writer in the same statement, reading created_plants", () => {
    const outbox = new CreatedPlantsOutbox();
    outbox.add('INSERT INTO a SELECT id FROM created_plants');
    outbox.add('INSERT INTO b SELECT id FROM created_plants');
    expect(outbox.statement(INSERT).replace(/\s+/g, ' ').trim()).toBe(
      `WITH ${INSERT}, ` +
        'outbox_0 AS (INSERT INTO a SELECT id FROM created_plants), ' +
        'outbox_1 AS (INSERT INTO b SELECT id FROM created_plants) ' +
        'SELECT id::text FROM created_plants',
    );
  });

  it('refuses a writer once the statement is in use', () => {
    const outbox = new CreatedPlantsOutbox();
    outbox.statement(INSERT);
    expect(() => outbox.add('INSERT INTO a SELECT 1')).toThrow(/before the first create/);
  });
});
