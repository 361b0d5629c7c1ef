import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiContract } from '../support/openapi-contract.js';
import { nextPageUrl, plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { webhooksClient } from '../support/webhooks-client.js';

type Verdict = 'accepted' | 'refused';

/**
 * The service's verdict: a success, or a 400 in the error shape (anything else is neither,
 * and fails the comparison).
 */
function verdictOf(response: LightMyRequestResponse): Verdict | string {
  if (response.statusCode >= 200 && response.statusCode < 300) return 'accepted';
  const body = response.json<{ error: number }>();
  return response.statusCode === 400 && body.error === 400 ? 'refused' : `${response.statusCode}`;
}

/**
 * What a strict client reads in the served document agrees with what the service does:
 * values at and beyond each rule the schemas state (no U+0000 in text, a webhook URL that
 * is http or https, a cursor that is not empty), judged by Ajv (JSON Schema 2020-12, with
 * ajv-formats) on the served document and sent to the service, get the same verdict.
 */
describe('the served schemas and the service agree', () => {
  let api: TestApp;
  let served: OpenApiContract;
  let plants: ReturnType<typeof plantsClient>;
  let webhooks: ReturnType<typeof webhooksClient>;
  let nextId = 1;

  const schema = (name: string) => ['components', 'schemas', name];
  const queryParameter = (path: string, name: string) => {
    const parameters = (
      served.document.paths[path].get as unknown as { parameters: { name: string }[] }
    ).parameters;
    const index = parameters.findIndex((parameter) => parameter.name === name);
    return ['paths', path, 'get', 'parameters', String(index), 'schema'];
  };
  const judge = async (pointer: string[], value: unknown, response: LightMyRequestResponse) => ({
    document: served.accepts(pointer, value) ? 'accepted' : 'refused',
    service: verdictOf(response),
  });

  beforeAll(async () => {
    api = await createTestApp({ WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
    [served] = api.contracts;
    plants = plantsClient(api, await api.issueToken());
    webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
  });
  afterAll(() => api.close());

  it.each<[Record<string, string>, Verdict]>([
    [{ name: 'Fern' }, 'accepted'],
    [{ name: '\u0001Fern\u0001' }, 'accepted'],
    [{ name: 'Fe\u0000rn' }, 'refused'],
    [{ name: '\u0000' }, 'refused'],
    [{ name: 'Fern', tag: 'tropical' }, 'accepted'],
    [{ name: 'Fern', tag: '\u0001' }, 'accepted'],
    [{ name: 'Fern', tag: 'tropical\u0000' }, 'refused'],
  ])('a plant %j: POST /plants and PUT /plants/{id} are %s by both', async (fields, verdict) => {
    const id = nextId++;
    const created = await plants.create({ id, ...fields });
    expect(await judge(schema('NewPlant'), { id, ...fields }, created)).toEqual({
      document: verdict,
      service: verdict,
    });
    // PUT replaces a plant that exists.
    if (verdict === 'refused') await plants.create({ id, name: 'Fern' });
    const replaced = await plants.replace(id, fields);
    expect(await judge(schema('PlantReplacement'), fields, replaced)).toEqual({
      document: verdict,
      service: verdict,
    });
  });

  it.each<[string, Verdict]>([
    ['http://127.0.0.1:9/plant/webhook', 'accepted'],
    ['https://127.0.0.1:9/plant/webhook', 'accepted'],
    ['HTTPS://127.0.0.1:9/plant/webhook', 'accepted'],
    ['hTtP://127.0.0.1:9/', 'accepted'],
    ['ftp://127.0.0.1:9/', 'refused'],
    ['ws://127.0.0.1:9/', 'refused'],
    ['httpx://127.0.0.1:9/', 'refused'],
    ['file:///etc/passwd', 'refused'],
    ['mailto:hooks@example.com', 'refused'],
    ['http:/127.0.0.1:9/', 'refused'],
    ['http:127.0.0.1:9/', 'refused'],
    [' http://127.0.0.1:9/', 'refused'],
    ['http://127.0.0.1:9/\u0000', 'refused'],
  ])('a webhook url %j is %s by both', async (url, verdict) => {
    const response = await webhooks.subscribe({ url });
    expect(await judge(schema('NewWebhook'), { url }, response)).toEqual({
      document: verdict,
      service: verdict,
    });
  });

  it.each<[string, Verdict]>([
    ['the shop floor', 'accepted'],
    ['', 'accepted'],
    ['\u0001', 'accepted'],
    ['the shop\u0000floor', 'refused'],
    ['\u0000', 'refused'],
  ])('a webhook description %j is %s by both', async (description, verdict) => {
    const body = { url: 'http://127.0.0.1:9/plant/webhook', description };
    const response = await webhooks.subscribe(body);
    expect(await judge(schema('NewWebhook'), body, response)).toEqual({
      document: verdict,
      service: verdict,
    });
  });

  it.each<[string, Verdict]>([
    ['tropical', 'accepted'],
    ['', 'accepted'],
    ['\u0001', 'accepted'],
    ['trop\u0000ical', 'refused'],
    ['\u0000', 'refused'],
  ])('a tag query %j is %s by both', async (tag, verdict) => {
    const response = await plants.list(`?${new URLSearchParams({ tag })}`);
    expect(await judge(queryParameter('/plants', 'tag'), tag, response)).toEqual({
      document: verdict,
      service: verdict,
    });
  });

  it('a cursor the service issued is accepted by both, an empty one refused by both', async () => {
    for (const id of [nextId++, nextId++]) await plants.create({ id, name: 'Paged' });
    const next = nextPageUrl(await plants.list('?limit=1'))!;
    const issued = new URL(next, 'http://localhost').searchParams.get('cursor')!;
    const cursor = queryParameter('/plants', 'cursor');
    expect(await judge(cursor, issued, await plants.send('GET', next))).toEqual({
      document: 'accepted',
      service: 'accepted',
    });
    expect(await judge(cursor, '', await plants.list('?limit=1&cursor='))).toEqual({
      document: 'refused',
      service: 'refused',
    });
  });
});
