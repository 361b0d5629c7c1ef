import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Letters, digits and `._:-`, up to 128: enough for UUIDs and tracing ids, nothing to inject. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `X-Request-Id` when it is sane, otherwise a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const presented = request.headers[REQUEST_ID_HEADER];
  return typeof presented === 'string' && SANE_REQUEST_ID.test(presented)
    ? presented
    : randomUUID();
}
