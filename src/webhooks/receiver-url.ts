import { RECEIVER_URL_PATTERN, URL_LIMITS } from './dto/create-webhook.dto.js';
import { ReceiverRefusedError } from './receiver-address.js';

const HTTP_URL = new RegExp(RECEIVER_URL_PATTERN, 'u');

/**
 * A receiver URL as the service sends to it: http or https, without credentials, on a port
 * other than 0. Checked at registration and again at each delivery attempt.
 */
export function parseReceiverUrl(text: string): URL {
  if (!URL.canParse(text)) throw new ReceiverRefusedError('url is not a valid absolute URL');
  // On the text as sent, as the document's pattern states it: the URL parser would also
  // take `http:/host` or ` http://host` and make `http://host/` of them.
  if (!HTTP_URL.test(text)) throw new ReceiverRefusedError('url must be an http or https URL');
  const url = new URL(text);
  // A secret in a URL ends up in logs and screens: receivers check the signature instead.
  if (url.username !== '' || url.password !== '') {
    throw new ReceiverRefusedError('url must not carry a user name or password');
  }
  // No receiver listens on port 0: a connection to it is refused, or reaches what the
  // network stack makes of it, never a receiver.
  if (url.port === '0') throw new ReceiverRefusedError('url must not use port 0');
  // Stored as normalised (an IDN host in punycode, spaces percent-encoded), which may be longer.
  if (url.href.length > URL_LIMITS.max) {
    throw new ReceiverRefusedError(`url must be at most ${URL_LIMITS.max} characters long`);
  }
  return url;
}
