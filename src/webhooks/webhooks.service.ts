import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import type { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { ReceiverAddressPolicy, ReceiverRefusedError } from './receiver-address.js';
import { parseReceiverUrl } from './receiver-url.js';
import { generateSigningSecret } from './webhook-signature.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * Subscriptions to new plants. A receiver must be on a public address (or allowed by
 * WEBHOOK_ALLOWED_HOSTS) when it is registered; the delivery worker checks again at each
 * attempt. Its secret is generated here and shown once, in the create's answer.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly receivers: ReceiverAddressPolicy,
  ) {}

  async create({ url, description }: CreateWebhookDto): Promise<WebhookSubscription> {
    let receiver: URL;
    try {
      receiver = parseReceiverUrl(url);
      await this.receivers.resolve(receiver);
    } catch (error) {
      if (error instanceof ReceiverRefusedError) throw new BadRequestException(error.message);
      throw error;
    }
    return this.webhooks.create({
      url: receiver.href,
      description: description ?? null,
      secret: generateSigningSecret(),
    });
  }

  list(): Promise<WebhookSubscription[]> {
    return this.webhooks.list();
  }

  async findOne(id: string): Promise<WebhookSubscription> {
    const subscription = await this.webhooks.findById(id);
    if (!subscription) throw webhookNotFound(id);
    return subscription;
  }

  /** Its deliveries not sent yet are dropped with it. */
  async delete(id: string): Promise<void> {
    if (!(await this.webhooks.delete(id))) throw webhookNotFound(id);
  }

  /**
   * Enables a subscription disabled for failing (or leaves an enabled one as it is); its
   * failures are counted from now on.
   */
  async enable(id: string): Promise<WebhookSubscription> {
    if (!(await this.webhooks.enable(id))) throw webhookNotFound(id);
    return this.findOne(id);
  }

  /**
   * Gives the subscription a new secret, returned this once; the previous one signs
   * deliveries too for `overlapSeconds` more, so that receivers can move to the new one
   * without refusing a delivery.
   */
  async rotateSecret(id: string, overlapSeconds: number): Promise<WebhookSubscription> {
    if (!(await this.webhooks.rotateSecret(id, generateSigningSecret(), overlapSeconds))) {
      throw webhookNotFound(id);
    }
    return this.findOne(id);
  }

  /** Sends the subscription's failed deliveries again, each from a first attempt. */
  async redeliverFailed(id: string): Promise<number> {
    await this.findOne(id);
    return this.webhooks.redeliverFailed(id);
  }
}

function webhookNotFound(id: string): NotFoundException {
  return new NotFoundException(`there is no webhook with id ${id}`);
}
