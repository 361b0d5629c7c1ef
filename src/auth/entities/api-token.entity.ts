import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A bearer token. Only the SHA-256 of its secret is stored; the secret is shown once. */
@Entity({ name: 'api_tokens' })
@Index('api_tokens_secret_hash_key', ['secretHash'], { unique: true })
// A name identifies one live token (for `token revoke NAME` and `token rotate`); revoked
// names may be reused, and a rotated token shares its name with its successor.
@Index('api_tokens_live_name_key', ['name'], {
  unique: true,
  where: 'revoked_at IS NULL AND rotated_at IS NULL',
})
export class ApiToken {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'secret_hash', type: 'char', length: 64 })
  secretHash: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /**
   * When `token rotate` gave its name to a new token; it keeps working until `expiresAt`,
   * the end of the overlap.
   */
  @Column({ name: 'rotated_at', type: 'timestamptz', nullable: true })
  rotatedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
