import type { TestApp } from './test-app.js';

export type Body = string | object;

/**
 * Requests as a client with one token sends them, through the test app (and so checked
 * against the served document); a string body is sent as is.
 */
export function apiClient(api: TestApp, token: string | undefined) {
  return (method: string, url: string, body?: Body, headers: Record<string, string> = {}) =>
    api.request({
      method: method as 'GET',
      url,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      payload: typeof body === 'object' ? JSON.stringify(body) : body,
    });
}
