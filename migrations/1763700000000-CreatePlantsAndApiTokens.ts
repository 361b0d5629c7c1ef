import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePlantsAndApiTokens1763700000000 implements MigrationInterface {
  name = 'CreatePlantsAndApiTokens1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE plants (
        id bigint PRIMARY KEY,
        name varchar(255) NOT NULL,
        tag varchar(255)
      )`);
    await queryRunner.query(`
      CREATE TABLE api_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        secret_hash char(64) NOT NULL,
        scopes text[] NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX api_tokens_secret_hash_key ON api_tokens (secret_hash)',
    );
    // A name identifies one live token (for `token revoke NAME`); revoked names may be reused.
    await queryRunner.query(
      'CREATE UNIQUE INDEX api_tokens_active_name_key ON api_tokens (name) WHERE revoked_at IS NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE api_tokens');
    await queryRunner.query('DROP TABLE plants');
  }
}
