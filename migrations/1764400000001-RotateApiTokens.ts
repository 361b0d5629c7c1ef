import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '../src/database/concurrent-index.js';

/**
 * `token rotate`: the rotated token keeps working until its `expires_at`, the end of the
 * overlap, while a new token takes its name. `rotated_at` marks it, and the name's unique
 * index leaves it out, as it leaves revoked ones out. Built concurrently, outside a
 * transaction, so that token writes go on meanwhile; the old index goes once the new one
 * holds. A release before this one keeps working: it honours `expires_at` and never sets
 * `rotated_at`.
 */
export class RotateApiTokens1764400000001 implements MigrationInterface {
  name = 'RotateApiTokens1764400000001';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS rotated_at timestamptz',
    );
    await createIndexConcurrently(
      queryRunner,
      'api_tokens_live_name_key',
      'api_tokens (name) WHERE revoked_at IS NULL AND rotated_at IS NULL',
      { unique: true },
    );
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS api_tokens_active_name_key');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Tokens in their overlap share a name with their successor: the old index would not
    // hold, so they end now, as a release without rotation would have ended them.
    await queryRunner.query(`
      UPDATE api_tokens SET revoked_at = now()
      WHERE rotated_at IS NOT NULL AND revoked_at IS NULL`);
    await createIndexConcurrently(
      queryRunner,
      'api_tokens_active_name_key',
      'api_tokens (name) WHERE revoked_at IS NULL',
      { unique: true },
    );
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS api_tokens_live_name_key');
    await queryRunner.query('ALTER TABLE api_tokens DROP COLUMN IF EXISTS rotated_at');
  }
}
