import type { FastifyRequest } from 'fastify';
import { routePattern } from '../http/request-observer.js';

/**
 * The `Link` header (RFC 8288) of a page that has a next one: the route's own path with
 * its parameters, and `query` with the cursor. Relative, built from the route rather
 * than echoed: the request target may be in absolute form (`GET
 * http://evil.example/plants`), and echoing it would point clients elsewhere.
 */
export function nextPageLink(
  request: FastifyRequest,
  query: Record<string, string | number | boolean | bigint | undefined>,
  cursor: string,
): string {
  const params = request.params as Record<string, string>;
  const path = routePattern(request).replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(params[name]),
  );
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) search.set(name, String(value));
  }
  search.set('cursor', cursor);
  return `<${path}?${search}>; rel="next"`;
}
