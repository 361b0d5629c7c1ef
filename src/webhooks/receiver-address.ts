import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A receiver URL the service will not send to, and why (a 400 at registration). */
export class ReceiverRefusedError extends Error {
  override name = 'ReceiverRefusedError';
}

export interface ReceiverAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Where receivers may be: public addresses only, unless WEBHOOK_ALLOWED_HOSTS names the
 * host or the address. A receiver on loopback, a private network, link-local (the cloud
 * metadata service at 169.254.169.254) or any other special range would let whoever
 * registers it make the service call inside its own network. Checked at registration
 * and again at each delivery, since DNS may change, and the delivery connects to the
 * address checked, never to a second lookup's.
 */
export class ReceiverAddressPolicy {
  private readonly allowedNames: Set<string>;
  private readonly allowedAddresses: Set<string>;

  /** @param lookupTimeoutMs a host name that does not resolve within this is refused. */
  constructor(
    allowedHosts: readonly string[],
    private readonly lookupTimeoutMs: number,
  ) {
    const addresses = allowedHosts.filter((host) => isIP(host) !== 0);
    this.allowedAddresses = new Set(addresses.map(normalise));
    this.allowedNames = new Set(
      allowedHosts.filter((host) => isIP(host) === 0).map((host) => host.toLowerCase()),
    );
  }

  /** The address to connect to for `url`; throws ReceiverRefusedError when there is none allowed. */
  async resolve(url: URL): Promise<ReceiverAddress> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(host);
    const addresses =
      family === 4 || family === 6
        ? [{ address: host, family }]
        : await withTimeout(lookup(host, { all: true }), this.lookupTimeoutMs).catch(() => {
            throw new ReceiverRefusedError(`the host ${host} does not resolve`);
          });
    if (addresses.length === 0) throw new ReceiverRefusedError(`the host ${host} does not resolve`);
    const nameAllowed = this.allowedNames.has(host.toLowerCase());
    for (const { address } of addresses) {
      const judged = withEmbeddedIpv4(address);
      const range = judged.range();
      if (
        range !== 'unicast' &&
        !nameAllowed &&
        !this.allowedAddresses.has(judged.toNormalizedString())
      ) {
        const where =
          isIP(address) === 6 && judged.kind() === 'ipv4'
            ? `${address} (${judged.toString()})`
            : address;
        throw new ReceiverRefusedError(
          `the host ${host} is at ${where}, a ${range} address: receivers must be public (or listed in WEBHOOK_ALLOWED_HOSTS)`,
        );
      }
    }
    const [first] = addresses;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}

/** The IPv4-compatible block (RFC 4291, deprecated): ::a.b.c.d, beside :: and ::1. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

function normalise(address: string): string {
  return withEmbeddedIpv4(address).toNormalizedString();
}

/**
 * The address whose range (ipaddr.js's name; 'unicast' is the public internet) decides.
 * An IPv6 address that carries an IPv4 one, IPv4-mapped (::ffff:127.0.0.1) or
 * IPv4-compatible (::127.0.0.1, which the URL parser writes ::7f00:1), as that IPv4
 * address: some network stacks deliver them there, so they are judged by where they lead.
 */
function withEmbeddedIpv4(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.process(address);
  // :: and ::1 are in the block too, but are IPv6's own unspecified and loopback addresses.
  if (parsed.kind() === 'ipv6' && parsed.range() === 'unicast' && parsed.match(IPV4_COMPATIBLE)) {
    return new ipaddr.IPv4(parsed.toByteArray().slice(12));
  }
  return parsed;
}

/** `promise`, or a rejection once `ms` have passed (a lookup cannot be cancelled). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
