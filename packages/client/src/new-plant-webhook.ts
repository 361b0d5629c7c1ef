import { Webhook as StandardWebhook, WebhookVerificationError } from 'standardwebhooks';
import { parseJson } from './json.js';
import type { NewPlant } from './plant-store-client.js';

/**
 * A delivery's headers: a fetch `Headers`, or an object of them as Node's `request.headers`
 * (any case).
 */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A verified delivery of a new plant. */
export interface NewPlantWebhook {
  /** The message, the same in every attempt: a receiver drops repeats by it. */
  webhookId: string;
  /** The plant, its id parsed without rounding. */
  plant: NewPlant;
}

/** A delivery that is not signed with any of the secrets given, or signed too long ago. */
export class InvalidWebhookError extends Error {
  override name = 'InvalidWebhookError';
}

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/** The Standard Webhooks headers, by their lower-case names, as the verifier reads them. */
function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const found: Record<string, string> = {};
  const keep = (value: string | string[] | undefined, name: string) => {
    const key = name.toLowerCase();
    if (value === undefined || !SIGNATURE_HEADERS.includes(key)) return;
    // Several signatures are separated by spaces (the specification's key rotation).
    found[key] = Array.isArray(value) ? value.join(' ') : value;
  };
  if (headers instanceof Headers) headers.forEach(keep);
  else for (const [name, value] of Object.entries(headers)) keep(value, name);
  return found;
}

/**
 * Verifies a delivery of the service's `/plant/webhook` with the Standard Webhooks library:
 * its signature with the subscription's `secret` (`whsec_…`, from `webhooks.create` or
 * `webhooks.rotateSecret`), and its timestamp within 5 minutes of now. While a receiver
 * moves to a rotated secret, give it both, old and new: a delivery signed with either
 * verifies. Give it the body as it arrived, before any JSON parsing: the signature covers
 * those bytes. Throws an InvalidWebhookError when the delivery does not verify with any of
 * them; answer that one 4xx and do not use it.
 */
export function verifyNewPlantWebhook(
  secrets: string | readonly string[],
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
): NewPlantWebhook {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const signed = signatureHeaders(headers);
  const candidates = typeof secrets === 'string' ? [secrets] : secrets;
  if (candidates.length === 0) throw new TypeError('verifyNewPlantWebhook needs a secret');
  let refusal: WebhookVerificationError | undefined;
  for (const secret of candidates) {
    try {
      // Parsed below, not by the library: its JSON.parse would round the id.
      new StandardWebhook(secret).verify(body, signed, { jsonParse: false });
      return { webhookId: signed['webhook-id'], plant: parseJson(body) as NewPlant };
    } catch (failure) {
      if (!(failure instanceof WebhookVerificationError)) throw failure;
      refusal ??= failure;
    }
  }
  throw new InvalidWebhookError(`the webhook delivery does not verify: ${refusal!.message}`, {
    cause: refusal,
  });
}
