import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import type { Actor } from '../audit/actor.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { Page } from '../common/pagination/keyset.js';
import { PAGE_SIZE } from '../common/pagination/page-query.dto.js';
import { retryRefused } from '../database/retry-refused.js';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import type { ListWebhooksQueryDto } from './dto/list-webhooks-query.dto.js';
import type { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { ReceiverAddressPolicy, ReceiverRefusedError } from './receiver-address.js';
import { parseReceiverUrl } from './receiver-url.js';
import { generateSigningSecret } from './webhook-signature.js';
import { WEBHOOKS_OLDEST_FIRST, WebhooksRepository } from './webhooks.repository.js';

/** A subscription with its new signing secret, in clear this once (it is stored encrypted). */
export interface WithNewSecret {
  subscription: WebhookSubscription;
  secret: string;
}

/**
 * Subscriptions to new plants. A receiver must be on a public address (or allowed by
 * WEBHOOK_ALLOWED_HOSTS) when it is registered; the delivery worker checks again at each
 * attempt. Its secret is generated here and shown once, in the create's answer. Each
 * change is recorded in the audit trail, with `actor`, in the transaction that makes it.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly receivers: ReceiverAddressPolicy,
    private readonly audit: AuditTrail,
  ) {}

  async create({ url, description }: CreateWebhookDto, actor: Actor): Promise<WithNewSecret> {
    let receiver: URL;
    try {
      receiver = parseReceiverUrl(url);
      await this.receivers.resolve(receiver);
    } catch (error) {
      if (error instanceof ReceiverRefusedError) throw new BadRequestException(error.message);
      throw error;
    }
    const secret = generateSigningSecret();
    const subscription = await retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const created = await this.webhooks.create(manager, {
          url: receiver.href,
          description: description ?? null,
          secret,
        });
        await record({
          event: 'webhook_subscription.created',
          subjectId: created.id,
          actor,
          details: { url: withoutQuery(created.url), description: created.description },
        });
        return created;
      }),
    );
    return { subscription, secret };
  }

  /** Subscriptions, oldest first: a page when asked for one (limit or cursor), else all. */
  async list({ limit, cursor }: ListWebhooksQueryDto): Promise<Page<WebhookSubscription>> {
    const after = WEBHOOKS_OLDEST_FIRST.startAfter(cursor);
    if (limit === undefined && after === undefined) {
      return { items: await this.webhooks.findPage(undefined) };
    }
    const size = limit ?? PAGE_SIZE.default;
    const subscriptions = await this.webhooks.findPage(after, size + 1);
    return WEBHOOKS_OLDEST_FIRST.pageOf(subscriptions, size);
  }

  async findOne(id: string): Promise<WebhookSubscription> {
    const subscription = await this.webhooks.findById(id);
    if (!subscription) throw webhookNotFound(id);
    return subscription;
  }

  /** Its deliveries not sent yet are dropped with it. */
  async delete(id: string, actor: Actor): Promise<void> {
    await retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const deleted = await this.webhooks.delete(manager, id);
        if (!deleted) throw webhookNotFound(id);
        await record({
          event: 'webhook_subscription.deleted',
          subjectId: id,
          actor,
          details: { url: withoutQuery(deleted.url) },
        });
      }),
    );
  }

  /**
   * Enables a subscription disabled for failing (or leaves an enabled one as it is); its
   * failures are counted from now on. Recorded either way: someone asked.
   */
  async enable(id: string, actor: Actor): Promise<WebhookSubscription> {
    await retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const enabled = await this.webhooks.enable(manager, id);
        if (!enabled) throw webhookNotFound(id);
        await record({
          event: 'webhook_subscription.enabled',
          subjectId: id,
          actor,
          details: { disabledAt: enabled.disabledAt },
        });
      }),
    );
    return this.findOne(id);
  }

  /**
   * Gives the subscription a new secret, returned this once; the previous one signs
   * deliveries too for `overlapSeconds` more, so that receivers can move to the new one
   * without refusing a delivery.
   */
  async rotateSecret(id: string, overlapSeconds: number, actor: Actor): Promise<WithNewSecret> {
    const secret = generateSigningSecret();
    await retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const rotated = await this.webhooks.rotateSecret(manager, id, secret, overlapSeconds);
        if (!rotated) throw webhookNotFound(id);
        await record({
          event: 'webhook_subscription.secret_rotated',
          subjectId: id,
          actor,
          details: { overlapSeconds, previousSecretExpiresAt: rotated.previousSecretExpiresAt },
        });
      }),
    );
    return { subscription: await this.findOne(id), secret };
  }

  /** Sends the subscription's failed deliveries again, each from a first attempt. */
  async redeliverFailed(id: string, actor: Actor): Promise<number> {
    return retryRefused(() =>
      this.audit.transaction(async (manager, record) => {
        const redelivered = await this.webhooks.redeliverFailed(manager, id);
        if (redelivered === null) throw webhookNotFound(id);
        await record({
          event: 'webhook_subscription.redelivered',
          subjectId: id,
          actor,
          details: { redelivered },
        });
        return redelivered;
      }),
    );
  }
}

/** A receiver URL as the audit trail keeps it: a query string may hold a key of the receiver's. */
function withoutQuery(url: string): string {
  const receiver = new URL(url);
  return `${receiver.origin}${receiver.pathname}`;
}

function webhookNotFound(id: string): NotFoundException {
  return new NotFoundException(`there is no webhook with id ${id}`);
}
