import type { Client } from 'openapi-fetch';
import type { paths } from './generated/plant-store-api.js';
import { parseJson } from './json.js';
import { PlantStoreError } from './plant-store-error.js';

/** The service's operations, typed from its document (openapi-fetch). */
export type Api = Client<paths>;

/** Bodies are read as text and parsed here: openapi-fetch's JSON.parse would round ids. */
export const parseAs = 'text' as const;

/** What openapi-fetch resolves with when asked for the body as text. */
export interface Answer {
  data?: string;
  error?: unknown;
  response: Response;
}

/** The answer's body, parsed without rounding an int64; a failure thrown as PlantStoreError. */
export function bodyOf<T>({ data, error, response }: Answer): T {
  if (!response.ok) throw PlantStoreError.from(response, error);
  return (data === undefined || data === '' ? undefined : parseJson(data)) as T;
}

const NEXT_LINK = /<([^>]*)>\s*;\s*rel="?next"?/;

/** The `cursor` of the next page, from a `Link: <…>; rel="next"` header; none on the last page. */
export function nextCursor(link: string | null): string | undefined {
  const target = link === null ? undefined : NEXT_LINK.exec(link)?.[1];
  return target === undefined
    ? undefined
    : (new URL(target, 'http://relative.invalid').searchParams.get('cursor') ?? undefined);
}
