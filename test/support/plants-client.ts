import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { apiClient, type Body } from './api-client.js';
import type { TestApp } from './test-app.js';

/** The plant operations as a client with one token calls them; a string body is sent as is. */
export function plantsClient(api: TestApp, token: string | undefined) {
  const send = apiClient(api, token);
  return {
    send,
    create: (plant: Body) => send('POST', '/plants', plant),
    list: (query = '') => send('GET', `/plants${query}`),
    get: (id: string | number | bigint) => send('GET', `/plants/${id}`),
    replace: (id: string | number | bigint, body: Body) => send('PUT', `/plants/${id}`, body),
    delete: (id: string | number | bigint) => send('DELETE', `/plants/${id}`),
  };
}

export type PlantsClient = ReturnType<typeof plantsClient>;

/** The response is the contract's error: `{error: <status>, message}` as application/json. */
export function expectError(response: LightMyRequestResponse, status: number, message: RegExp) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<{ error: number; message: string }>();
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(status);
  expect(body.message).toMatch(message);
}

const NEXT_LINK = /^<([^>]+)>; rel="next"$/;

/** The address in a response's `Link: <…>; rel="next"` header, if it has one. */
export function nextPageUrl(response: LightMyRequestResponse): string | undefined {
  const link = response.headers.link;
  if (link === undefined) return undefined;
  const match = NEXT_LINK.exec(String(link));
  expect(match, `Link header ${link}`).not.toBeNull();
  return match![1];
}

/** Every page from `firstUrl` on, following the Link headers. */
export async function readAllPages(client: PlantsClient, firstUrl: string) {
  const pages: Array<Array<{ id: number; name: string; tag?: string }>> = [];
  for (let url: string | undefined = firstUrl; url !== undefined;) {
    const response = await client.send('GET', url);
    expect(response.statusCode).toBe(200);
    pages.push(response.json());
    url = nextPageUrl(response);
  }
  return pages;
}
