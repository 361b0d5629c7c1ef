import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ReceiverAddress } from '../receiver-address.js';

/** A receiver's answer is read this far at most, then the connection is cut. */
export const RESPONSE_LIMIT_BYTES = 64 * 1024;

export interface Attempt {
  url: URL;
  /** The address checked by ReceiverAddressPolicy: the only one connected to. */
  address: ReceiverAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** The receiver's status, or why there was none. */
export type AttemptResult = { status: number } | { error: string };

/**
 * One POST to an untrusted receiver: to the address checked, within `timeoutMs` from
 * connecting to the last byte, reading at most RESPONSE_LIMIT_BYTES of the answer, and
 * never following a redirect (a 3xx is an answer like any other, and not a 2xx).
 */
export function sendAttempt({
  url,
  address,
  headers,
  body,
  timeoutMs,
}: Attempt): Promise<AttemptResult> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      resolve(result);
    };
    const outgoing = request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinned,
        agent: false,
      },
      (response: IncomingMessage) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > RESPONSE_LIMIT_BYTES) settle({ status: response.statusCode! });
        });
        response.on('end', () => settle({ status: response.statusCode! }));
        response.on('error', (error) => settle({ error: error.message }));
      },
    );
    const timer = setTimeout(
      () => settle({ error: `no complete answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    outgoing.on('error', (error) => settle({ error: error.message }));
    outgoing.end(body);
  });
}
