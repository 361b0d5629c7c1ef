import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A receiver URL that is sent every new plant, with the secret its deliveries are signed with. */
@Entity({ name: 'webhook_subscriptions' })
export class WebhookSubscription {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  /**
   * The secret in clear (`whsec_…`), as the release before encryption at rest wrote and
   * signs with it; this release writes null, and `webhook-secrets re-encrypt` erases the
   * old copies once that release is gone.
   */
  @Column({ type: 'varchar', length: 64, nullable: true })
  secret: string | null;

  /**
   * The signing secret, encrypted (WebhookSecretKeyring): needed to sign, so it cannot be
   * hashed like a token. Null only for a subscription the release before created.
   */
  @Column({ name: 'secret_encrypted', type: 'text', nullable: true })
  secretEncrypted: string | null;

  /**
   * The secret before the last rotation, encrypted like `secretEncrypted`: deliveries are
   * signed with it too until it expires.
   */
  @Column({ name: 'previous_secret', type: 'text', nullable: true })
  previousSecret: string | null;

  /** When the previous secret stops signing; null when there is none. */
  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null;

  /** The receiver's HTTP status at the last attempt; null: no answer (see lastError). */
  @Column({ name: 'last_status', type: 'integer', nullable: true })
  lastStatus: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 255, nullable: true })
  lastError: string | null;

  @Column({ name: 'failures_in_a_row', type: 'integer', default: 0 })
  failuresInARow: number;

  /** The first failed attempt since the last success (or since it was enabled); null: none. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  /**
   * Set when every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS: nothing is sent to
   * it until it is enabled again (POST /webhooks/{id}/enable).
   */
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;
}
