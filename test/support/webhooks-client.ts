import { apiClient, type Body } from './api-client.js';
import type { TestApp } from './test-app.js';

/** The webhook operations as a client with one token calls them. */
export function webhooksClient(api: TestApp, token: string | undefined) {
  const send = apiClient(api, token);
  return {
    send,
    subscribe: (body: Body) => send('POST', '/webhooks', body),
    list: () => send('GET', '/webhooks'),
    get: (id: string) => send('GET', `/webhooks/${id}`),
    delete: (id: string) => send('DELETE', `/webhooks/${id}`),
    redeliver: (id: string) => send('POST', `/webhooks/${id}/redeliver`),
    enable: (id: string) => send('POST', `/webhooks/${id}/enable`),
    rotateSecret: (id: string, body?: Body) => send('POST', `/webhooks/${id}/rotate-secret`, body),
  };
}
