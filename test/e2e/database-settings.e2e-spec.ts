import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresPool } from '../../src/database/postgres-pool.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('DATABASE_POOL_SIZE, DATABASE_CONNECT_TIMEOUT_MS and DATABASE_STATEMENT_TIMEOUT_MS', () => {
  let api: TestApp;
  let dataSource: DataSource;

  beforeAll(async () => {
    api = await createTestApp({
      DATABASE_POOL_SIZE: '5',
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '1234',
    });
    dataSource = api.app.get<DataSource>(getDataSourceToken());
  });
  afterAll(() => api.close());

  it('size the pool and bound its waits, the client a second after the server', () => {
    expect(postgresPool(dataSource).options).toMatchObject({
      max: 5,
      connectionTimeoutMillis: 1500,
      query_timeout: 2234,
    });
  });

  it('have PostgreSQL cancel a statement that runs longer', async () => {
    const [{ statement_timeout }] =
      await dataSource.query<[{ statement_timeout: string }]>('SHOW statement_timeout');
    expect(statement_timeout).toBe('1234ms');
    await expect(dataSource.query('SELECT pg_sleep(2)')).rejects.toThrow(
      /canceling statement due to statement timeout/,
    );
  });
});
