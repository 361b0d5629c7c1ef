import pg from 'pg';
import type { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { postgresPool } from '../../src/database/postgres-pool.js';

const dataSourceWith = (master: unknown) => ({ driver: { master } }) as unknown as DataSource;

describe('postgresPool', () => {
  it("answers TypeORM's pg pool", () => {
    const pool = new pg.Pool();
    expect(postgresPool(dataSourceWith(pool))).toBe(pool);
  });

  it('fails loudly when TypeORM keeps something else there', () => {
    expect(() => postgresPool(dataSourceWith(undefined))).toThrow(/driver\.master/);
    expect(() => postgresPool(dataSourceWith({ query() {} }))).toThrow(/postgres-pool\.ts/);
  });
});
