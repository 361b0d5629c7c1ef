import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { parse } from 'lossless-json';
import { stringifyJson } from '../../src/common/json/json-codec.js';
import { parseJsonNumber } from '../../src/common/json/json-number.js';
import { fuzzParameters } from './fuzz.js';
import {
  type Generated,
  objectSpace,
  resolveSchema,
  type Schema,
  type SchemaOptions,
  type ValueSpace,
  type Verdict,
  valueSpace,
  worst,
} from './openapi-arbitraries.js';
import type { OpenApiDocument } from './openapi-contract.js';

/*
 * A stateful fuzzer of every operation of an OpenAPI document.
 *
 * Links between operations are read from paths and names, the same way for every module:
 * - a path parameter names an item of the collection whose literal segment comes just
 *   before it: in `/plants/{id}/harvests` and `/plants/{id}`, `id` is a plant's id;
 * - a POST to a path ending in a collection's segment creates one of its items, when the
 *   document has a path naming an item of it (`/plants` and `/plants/{id}`, or
 *   `/plants/{id}/harvests` and `/harvests/{id}`). The item's id is the answer's `id`,
 *   else the last segment of its `Location`, else the request body's `id`;
 * - a body property `<singular>Id` (or `<singular>_id`) names an item of that collection
 *   (`plantId` → `plants`, `careNoteId` → `care-notes`);
 * - a body property `id` of an operation on an item repeats the path's id;
 * - text with no rule (no length, format or pattern) is something the service issues, such
 *   as a cursor: valid requests send a value seen in an earlier `Link` header, or none.
 * Creates run first, parents before children, so that the others name real items; deletes
 * run last, children first. Each item created is remembered with its parents.
 */

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
  /** The body's media type: application/json, or application/merge-patch+json for a PATCH. */
  mediaType?: string;
  /** Whether the operation needs a token (a request without one is a 401). */
  secured: boolean;
  /** The statuses the document lists for it. */
  statuses: number[];
}

/** Where the fuzzer sends requests. */
export interface FuzzTarget {
  document: OpenApiDocument;
  /** Sends a request and throws when the answer breaks the document (TestApp.request). */
  send(request: InjectOptions): Promise<LightMyRequestResponse>;
  /** A token holding every scope the operations need. */
  token: string;
}

export interface FuzzOptions extends SchemaOptions {
  /** Generated requests per operation (`npm run fuzz` runs FUZZ_RUNS). */
  runsPerOperation: number;
  /**
   * The operations to fuzz (all by default). The creates of the collections they name are
   * run too, so that they name real items.
   */
  only?: (operation: Operation) => boolean;
}

/** The statuses each fuzzed operation answered its generated requests with. */
export interface FuzzReport {
  operations: Operation[];
  statuses: Map<string, Set<number>>;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** The bodies the fuzzer writes: JSON, and the JSON Merge Patch (RFC 7396) of a PATCH. */
const BODY_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'];
/** The rate limit's 4xx: no request of a test with the limit off can cause it. */
const RATE_LIMITED = 429;
/** A list's pages read back after a success, at most (its items are checked against the document). */
const MAX_PAGES = 50;

/** Every operation of a document. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const defaultSecurity = (document as { security?: object[] }).security ?? [];
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as unknown as Record<string, Record<string, unknown>>)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => {
        const security = (operation.security as object[] | undefined) ?? defaultSecurity;
        const content = (operation.requestBody as { content?: Record<string, { schema: Schema }> })
          ?.content;
        const mediaType = BODY_MEDIA_TYPES.find((type) => content?.[type]);
        return {
          operationId: operation.operationId as string,
          method: method.toUpperCase(),
          path,
          parameters: (operation.parameters as Parameter[] | undefined) ?? [],
          body: mediaType === undefined ? undefined : content?.[mediaType].schema,
          mediaType,
          secured:
            security.length > 0 &&
            security.every((requirement) => Object.keys(requirement).length > 0),
          statuses: Object.keys(operation.responses as object).map(Number),
        };
      }),
  );
}

/** The operations that answered no 2xx, or no 4xx although the document lists one. */
export function coverageGaps({ operations, statuses }: FuzzReport): string[] {
  return operations.flatMap(({ operationId, statuses: documented }) => {
    const answered = [...statuses.get(operationId)!];
    const clientErrors = documented.filter((s) => s >= 400 && s < 500 && s !== RATE_LIMITED);
    return [
      ...(answered.some((s) => s < 300) ? [] : [`${operationId}: no 2xx in ${answered}`]),
      ...(clientErrors.length === 0 || answered.some((s) => s >= 400 && s < 500)
        ? []
        : [`${operationId}: no 4xx in ${answered}`]),
    ];
  });
}

const segmentsOf = (path: string) => path.split('/').filter(Boolean);
/** A list of the value, or an empty one when there is none. */
const listOf = <T>(value: T | undefined): T[] => (value === undefined ? [] : [value]);
const isParameter = (segment: string) => segment.startsWith('{');

/** The collection whose item a path parameter names: the literal segment before it. */
function collectionOf(path: string, parameter: string): string | undefined {
  const segments = segmentsOf(path);
  const before = segments[segments.indexOf(`{${parameter}}`) - 1];
  return before && !isParameter(before) ? before : undefined;
}

/** The collection a POST adds an item to, when it is a create. */
function createdCollection(operation: Operation, itemCollections: Set<string>) {
  const last = segmentsOf(operation.path).at(-1);
  return operation.method === 'POST' && last && itemCollections.has(last) ? last : undefined;
}

/** The collection a body property names an item of: `plantId` or `plant_id` → `plants`. */
function referencedCollection(property: string, collections: Set<string>): string | undefined {
  const camel = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  for (const collection of collections) {
    const singulars = [
      collection.replace(/ies$/, 'y'),
      collection.replace(/e?s$/, ''),
      collection.replace(/s$/, ''),
    ];
    for (const singular of singulars) {
      if (
        property === `${camel(singular)}Id` ||
        property === `${singular.replaceAll('-', '_')}_id`
      ) {
        return collection;
      }
    }
  }
  return undefined;
}

/** An item of a collection, to be picked when the request is sent (items appear as it runs). */
class Reference {
  constructor(
    readonly collection: string,
    readonly pick: number,
    /** Sent when the collection has no item yet: a valid id that names nothing. */
    readonly fallback: unknown,
  ) {}
}

/** The value the request's path gives a parameter (a body's `id` repeating the path's). */
class PathValue {
  constructor(readonly parameter: string) {}
}

/** A value the service issued for a query parameter (in a `Link`), or none. */
class Issued {
  constructor(
    readonly parameter: string,
    readonly pick: number,
  ) {}
}

interface Item {
  collection: string;
  /** As JSON has it: a number, a bigint beyond 2^53, or a string. */
  id: unknown;
  /** The ids of the items it belongs to, by collection. */
  parents: Map<string, unknown>;
}

/** The items created and not deleted, by collection. */
class Items {
  private readonly byCollection = new Map<string, Item[]>();

  add(item: Item): void {
    const items = this.of(item.collection);
    if (!items.some(({ id }) => String(id) === String(item.id))) items.push(item);
  }

  /** Removes the item and every item that belongs to it. */
  remove(collection: string, id: unknown): void {
    this.byCollection.set(
      collection,
      this.of(collection).filter((item) => String(item.id) !== String(id)),
    );
    for (const [other, items] of this.byCollection) {
      for (const item of items.filter(
        ({ parents }) => String(parents.get(collection)) === String(id),
      )) {
        this.remove(other, item.id);
      }
    }
  }

  /** One item of `collection`, of the parents already chosen where it has them. */
  pick(collection: string, pick: number, chosen: Map<string, unknown>): Item | undefined {
    const items = this.of(collection).filter(({ parents }) =>
      [...parents].every(
        ([parent, id]) => !chosen.has(parent) || String(chosen.get(parent)) === String(id),
      ),
    );
    return items.length === 0 ? undefined : items[pick % items.length];
  }

  private of(collection: string): Item[] {
    let items = this.byCollection.get(collection);
    if (!items) this.byCollection.set(collection, (items = []));
    return items;
  }
}

type Kind = 'valid' | 'invalid' | 'anonymous' | 'wild';

/** A request as generated: values with verdicts, references resolved when it is sent. */
interface Draft {
  kind: Kind;
  path: Record<string, Generated>;
  /** An optional parameter left out is absent, or undefined. */
  query: Record<string, Generated | undefined>;
  body?: Generated | { text: string };
}

/** A request as sent, and what its answer must be. */
interface Sent {
  request: InjectOptions & { method: string; url: string };
  verdict: Verdict;
  /** The items its path and body name, by collection. */
  named: Map<string, unknown>;
  body?: unknown;
}

/**
 * Fuzzes the operations of `target.document` with requests generated from their schemas:
 * valid ones (the service must answer 2xx, or 409), ones that break exactly one rule of
 * the document (4xx), ones without a token (401) and any text at all (never 5xx). Every
 * answer must be one the document declares, in its shape; after every 2xx the item is
 * read back, and every page of its collection's list, which must be in the document's
 * shape too. Throws at the first failure; returns the statuses each operation answered.
 */
export async function fuzzOperations(
  target: FuzzTarget,
  options: FuzzOptions,
): Promise<FuzzReport> {
  return new OperationFuzzer(target, options).run();
}

class OperationFuzzer {
  private readonly operations: Operation[];
  private readonly itemCollections: Set<string>;
  private readonly items = new Items();
  /** Query values the service issued in `Link` headers, by path and parameter name. */
  private readonly issued = new Map<string, string[]>();

  constructor(
    private readonly target: FuzzTarget,
    private readonly options: FuzzOptions,
  ) {
    this.operations = operationsOf(target.document);
    this.itemCollections = new Set(
      this.operations.flatMap(({ path, parameters }) =>
        parameters.flatMap(({ name, in: where }) =>
          where === 'path' ? listOf(collectionOf(path, name)) : [],
        ),
      ),
    );
  }

  async run(): Promise<FuzzReport> {
    const fuzzed = this.operations.filter(this.options.only ?? (() => true));
    const statuses = new Map(fuzzed.map(({ operationId }) => [operationId, new Set<number>()]));
    // One seed for the whole run, so that FUZZ_SEED replays every operation's requests.
    const parameters = { ...fuzzParameters(this.options.runsPerOperation), endOnFailure: true };
    for (const operation of this.inOrder(fuzzed)) {
      const answered = statuses.get(operation.operationId) ?? new Set<number>();
      const run = await fc.check(
        fc.asyncProperty(this.drafts(operation), async (draft) => {
          answered.add(await this.exercise(operation, draft));
        }),
        parameters,
      );
      if (run.failed) {
        const cause =
          run.errorInstance instanceof Error ? run.errorInstance.message : run.errorInstance;
        throw new Error(
          `fuzzing ${operation.operationId} failed at request ${run.numRuns} (FUZZ_SEED=${run.seed}): ${cause}`,
        );
      }
    }
    return { operations: fuzzed, statuses };
  }

  /**
   * Creates first, each after the creates of the collections it names; then the other
   * operations; deletes last, children before their parents.
   */
  private inOrder(fuzzed: Operation[]): Operation[] {
    const creates = this.operations.filter((operation) => this.creates(operation));
    // The creates of the collections the fuzzed operations name, and of those they name.
    const needed = new Set(fuzzed);
    const named = new Set(fuzzed.flatMap((operation) => this.namedCollections(operation)));
    for (let grew = true; grew;) {
      grew = false;
      for (const create of creates) {
        if (needed.has(create) || !named.has(this.creates(create)!)) continue;
        needed.add(create);
        for (const collection of this.namedCollections(create)) named.add(collection);
        grew = true;
      }
    }
    // Parents first: a create is ready once no pending create makes what it names.
    const ordered: Operation[] = [];
    const pending = creates.filter((create) => needed.has(create));
    while (pending.length > 0) {
      const ready =
        pending.find((create) =>
          this.namedCollections(create).every((collection) =>
            pending.every((other) => this.creates(other) !== collection),
          ),
        ) ?? pending[0];
      ordered.push(ready);
      pending.splice(pending.indexOf(ready), 1);
    }
    const createOrder = ordered.map((create) => this.creates(create));
    const deletes = fuzzed
      .filter(({ method }) => method === 'DELETE')
      .sort(
        (a, b) =>
          createOrder.indexOf(this.itemCollection(b)) - createOrder.indexOf(this.itemCollection(a)),
      );
    const others = fuzzed.filter(
      (operation) => !ordered.includes(operation) && !deletes.includes(operation),
    );
    return [...ordered, ...others, ...deletes];
  }

  private creates(operation: Operation): string | undefined {
    return createdCollection(operation, this.itemCollections);
  }

  /** The collection of the item an operation's path ends on (`/plants/{id}` → plants). */
  private itemCollection({ path }: Operation): string | undefined {
    const last = segmentsOf(path).at(-1);
    return last && isParameter(last) ? collectionOf(path, last.slice(1, -1)) : undefined;
  }

  /** The collection of the item an operation's last path parameter names (`/webhooks/{id}/enable` → webhooks). */
  private lastNamedCollection({ path }: Operation): string | undefined {
    const last = segmentsOf(path).findLast(isParameter);
    return last && collectionOf(path, last.slice(1, -1));
  }

  /** The collections whose items an operation's path parameters and body properties name. */
  private namedCollections(operation: Operation): string[] {
    const inPath = operation.parameters.flatMap(({ name, in: where }) =>
      where === 'path' ? listOf(collectionOf(operation.path, name)) : [],
    );
    const properties = operation.body
      ? Object.keys(resolveSchema(this.target.document, operation.body).properties ?? {})
      : [];
    const inBody = properties.flatMap((name) =>
      listOf(referencedCollection(name, this.itemCollections)),
    );
    return [...inPath, ...inBody];
  }

  private space(schema: Schema): ValueSpace {
    return valueSpace(this.target.document, schema, this.options);
  }

  /** An item of `collection`, or a valid id that names nothing while it has none. */
  private referenceSpace(collection: string, schema: Schema): ValueSpace {
    const { valid, invalid } = this.space(schema);
    return {
      valid: fc.tuple(fc.nat(), valid).map(([pick, fallback]) => ({
        value: new Reference(collection, pick, fallback.value),
        verdict: 'valid',
      })),
      invalid,
    };
  }

  /** A parameter's values as text: an invalid one must stay invalid once it is text. */
  private parameterSpace(operation: Operation, { name, schema }: Parameter): ValueSpace {
    const resolved = resolveSchema(this.target.document, schema);
    const collection = collectionOf(operation.path, name);
    const isOpaque =
      resolved.type === 'string' &&
      resolved.maxLength === undefined &&
      resolved.format === undefined &&
      resolved.pattern === undefined &&
      resolved.enum === undefined;
    const space: ValueSpace = collection
      ? this.referenceSpace(collection, resolved)
      : isOpaque
        ? { valid: fc.nat().map((pick) => ({ value: new Issued(name, pick), verdict: 'valid' })) }
        : this.space(resolved);
    const textIsInvalid = ({ value }: Generated) =>
      (typeof value === 'string') === (resolved.type === 'string');
    return {
      valid: space.valid,
      invalid: resolved.type === 'boolean' ? undefined : space.invalid?.filter(textIsInvalid),
    };
  }

  private bodySpace(operation: Operation): ValueSpace {
    const schema = resolveSchema(this.target.document, operation.body!);
    const pathItem = segmentsOf(operation.path).at(-1)!;
    const overrides: Record<string, ValueSpace> = {};
    for (const [name, property] of Object.entries(
      (schema.properties ?? {}) as Record<string, Schema>,
    )) {
      const collection = referencedCollection(name, this.itemCollections);
      if (collection) overrides[name] = this.referenceSpace(collection, property);
      if (name === 'id' && isParameter(pathItem) && this.itemCollection(operation)) {
        const echo = new PathValue(pathItem.slice(1, -1));
        overrides[name] = {
          valid: fc.constant({ value: echo, verdict: 'valid' }),
          invalid: this.space(property).invalid,
        };
      }
    }
    return objectSpace(this.target.document, schema, this.options, overrides);
  }

  /** Requests for an operation, of every kind it can have. */
  private drafts(operation: Operation): fc.Arbitrary<Draft> {
    const pathParameters = operation.parameters.filter((p) => p.in === 'path');
    const queryParameters = operation.parameters.filter((p) => p.in === 'query');
    const path = Object.fromEntries(
      pathParameters.map((p) => [p.name, this.parameterSpace(operation, p)]),
    );
    const query = Object.fromEntries(
      queryParameters.map((p) => [p.name, this.parameterSpace(operation, p)]),
    );
    const body = operation.body ? this.bodySpace(operation) : undefined;
    const required = queryParameters.filter((p) => p.required).map(({ name }) => name);
    const validOf = (spaces: Record<string, ValueSpace>) =>
      Object.fromEntries(Object.entries(spaces).map(([name, space]) => [name, space.valid]));
    const valid = fc.record({
      path: fc.record(validOf(path)),
      query: fc.record(validOf(query), { requiredKeys: required }),
      ...(body && { body: body.valid }),
    });
    const breakOne = (part: 'path' | 'query', spaces: Record<string, ValueSpace>) =>
      Object.entries(spaces).flatMap(([name, { invalid }]) =>
        invalid
          ? [
              fc.tuple(valid, invalid).map(([draft, broken]) => ({
                ...draft,
                [part]: { ...draft[part], [name]: broken },
              })),
            ]
          : [],
      );
    const invalid = [
      ...breakOne('path', path),
      ...breakOne('query', query),
      ...(body?.invalid
        ? [fc.tuple(valid, body.invalid).map(([draft, broken]) => ({ ...draft, body: broken }))]
        : []),
    ];
    const anyText = fc
      .string({ unit: 'binary', maxLength: 40 })
      .map((value): Generated => ({ value, verdict: 'edge' }));
    const wild = fc.record({
      path: fc.record(Object.fromEntries(pathParameters.map(({ name }) => [name, anyText]))),
      query: fc.record(Object.fromEntries(queryParameters.map(({ name }) => [name, anyText])), {
        requiredKeys: [],
      }),
      ...(body && {
        body: fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).map((value) => ({ text: JSON.stringify(value) })),
          fc.string({ unit: 'binary', maxLength: 60 }).map((text) => ({ text })),
        ),
      }),
    });
    const kind =
      (name: Kind) =>
      (draft: Omit<Draft, 'kind'>): Draft => ({ ...draft, kind: name });
    return fc.oneof(
      { weight: 4, arbitrary: valid.map(kind('valid')) },
      ...(invalid.length > 0
        ? [{ weight: 3, arbitrary: fc.oneof(...invalid).map(kind('invalid')) }]
        : []),
      ...(operation.secured ? [{ weight: 1, arbitrary: valid.map(kind('anonymous')) }] : []),
      { weight: 1, arbitrary: wild.map(kind('wild')) },
    );
  }

  /** Sends one generated request, checks its answer and reads back what it changed. */
  private async exercise(operation: Operation, draft: Draft): Promise<number> {
    const sent = this.resolve(operation, draft);
    const response = await this.target.send(sent.request);
    const status = response.statusCode;
    const expected = expectedStatuses(draft.kind, sent.verdict);
    if (!expected.accepts(status)) {
      throw new Error(
        `${operation.operationId}: a request ${expected.what} was answered ${status}\n` +
          `${described(sent.request)} ${sent.request.payload ?? ''}\n→ ${response.body}`,
      );
    }
    if (status >= 200 && status < 300 && draft.kind !== 'anonymous') {
      this.rememberIssued(response);
      await this.afterSuccess(operation, sent, response);
    }
    return status;
  }

  /** The request a draft stands for, with the items it names picked now. */
  private resolve(operation: Operation, draft: Draft): Sent {
    const named = new Map<string, unknown>();
    let verdict = worst([
      ...Object.values(draft.path).map(({ verdict }) => verdict),
      ...Object.values(draft.query).flatMap((part) => (part ? [part.verdict] : [])),
      ...(draft.body && 'verdict' in draft.body ? [draft.body.verdict] : []),
    ]);
    const pick = (value: unknown): unknown => {
      if (value instanceof Reference) {
        const item = this.items.pick(value.collection, value.pick, named);
        if (!item) {
          verdict = worst([verdict, 'edge']);
          return value.fallback;
        }
        named.set(item.collection, item.id);
        for (const [parent, id] of item.parents) named.set(parent, id);
        return item.id;
      }
      return value;
    };
    // The last parameter first: its item decides which parents the others name.
    const pathValues: Record<string, unknown> = {};
    for (const segment of segmentsOf(operation.path).filter(isParameter).reverse()) {
      const name = segment.slice(1, -1);
      pathValues[name] = pick(draft.path[name].value);
    }
    const url = segmentsOf(operation.path)
      .map((segment) =>
        isParameter(segment)
          ? encodeURIComponent(String(pathValues[segment.slice(1, -1)]))
          : segment,
      )
      .join('/');
    const query = Object.fromEntries(
      Object.entries(draft.query).flatMap(([name, part]) => {
        const text =
          part?.value instanceof Issued
            ? this.issuedFor(`/${url}`, part.value)
            : part && pick(part.value);
        return text === undefined ? [] : [[name, String(text)]];
      }),
    );
    const deep = (value: unknown): unknown => {
      if (value instanceof PathValue) return pathValues[value.parameter];
      if (value instanceof Reference) return pick(value);
      if (Array.isArray(value)) return value.map(deep);
      if (value && typeof value === 'object') {
        return Object.fromEntries(
          Object.entries(value).map(([key, member]) => [key, deep(member)]),
        );
      }
      return value;
    };
    const body = draft.body && 'value' in draft.body ? deep(draft.body.value) : undefined;
    const payload =
      draft.body && 'text' in draft.body
        ? draft.body.text
        : draft.body
          ? stringifyJson(body)
          : undefined;
    const authorization =
      draft.kind === 'anonymous' ? {} : { authorization: `Bearer ${this.target.token}` };
    return {
      request: {
        method: operation.method,
        url: `/${url}`,
        query,
        headers: {
          ...authorization,
          ...(payload !== undefined && {
            'content-type': operation.mediaType ?? 'application/json',
          }),
        },
        ...(payload !== undefined && { payload }),
      },
      verdict: draft.kind === 'wild' ? 'edge' : verdict,
      named,
      body,
    };
  }

  /**
   * Keeps the query values of a `Link` to a next page, for its path alone: a cursor is
   * the list's own (a plant's cursor means nothing to a list of harvests, nor one plant's
   * harvests' to another's).
   */
  private rememberIssued(response: LightMyRequestResponse): void {
    const next = nextPage(response);
    if (!next) return;
    const { pathname, searchParams } = new URL(next, 'http://localhost');
    for (const [name, value] of searchParams) {
      const values = this.issued.get(`${pathname} ${name}`) ?? [];
      if (!values.includes(value)) {
        this.issued.set(`${pathname} ${name}`, [...values, value].slice(-20));
      }
    }
  }

  /** A value the service issued for this parameter on this path, or none. */
  private issuedFor(path: string, { parameter, pick }: Issued): string | undefined {
    const issued = this.issued.get(`${path} ${parameter}`) ?? [];
    return issued.length === 0 ? undefined : issued[pick % issued.length];
  }

  /** Remembers the item created or deleted, and reads back the item and its lists. */
  private async afterSuccess(operation: Operation, sent: Sent, response: LightMyRequestResponse) {
    const created = this.creates(operation);
    let item: Item | undefined;
    if (created) {
      item = {
        collection: created,
        id: createdId(response, sent.body),
        parents: new Map(sent.named),
      };
      if (item.id === undefined) {
        throw new Error(
          `${operation.operationId} answered ${response.statusCode} naming no id: ${response.body}`,
        );
      }
      this.items.add(item);
    } else {
      const collection = this.lastNamedCollection(operation);
      if (!collection || operation.method === 'GET') return;
      const id = sent.named.get(collection);
      if (id === undefined) return;
      const parents = new Map([...sent.named].filter(([other]) => other !== collection));
      item = { collection, id, parents };
      if (operation.method === 'DELETE') this.items.remove(collection, id);
    }
    const context = `after ${described(sent.request)} → ${response.statusCode}`;
    const deleted = operation.method === 'DELETE';
    await this.readBack(item, context, deleted ? undefined : writtenFields(sent.body, response));
  }

  /**
   * GETs the item: 404 once deleted, else 200 with the fields the request wrote as the
   * write's answer had them; and every page of the lists it is in.
   */
  private async readBack(
    item: Item,
    context: string,
    written: Record<string, string> | undefined,
  ): Promise<void> {
    const ids = new Map([...item.parents, [item.collection, item.id]]);
    const fill = (operation: Operation) =>
      segmentsOf(operation.path).map((segment) => {
        if (!isParameter(segment)) return segment;
        return encodeURIComponent(
          String(ids.get(collectionOf(operation.path, segment.slice(1, -1))!)),
        );
      });
    const get = this.operations.find(
      (operation) =>
        operation.method === 'GET' && this.itemCollection(operation) === item.collection,
    );
    if (get) {
      const url = `/${fill(get).join('/')}`;
      const response = await this.readOrExplain(url, context);
      const expected = written ? 200 : 404;
      if (response.statusCode !== expected) {
        throw new Error(
          `${context}: GET ${url} answered ${response.statusCode}, not ${expected}: ${response.body}`,
        );
      }
      const read = written && fieldsOf(response.body);
      for (const [name, value] of Object.entries(written ?? {})) {
        if (read?.[name] !== undefined && read[name] !== value) {
          throw new Error(`${context}: GET ${url} reads ${name} as ${read[name]}, not ${value}`);
        }
      }
    }
    const lists = this.operations.filter(
      (operation) =>
        operation.method === 'GET' &&
        segmentsOf(operation.path).at(-1) === item.collection &&
        operation.parameters.every(
          ({ name, in: where }) => where !== 'path' || ids.has(collectionOf(operation.path, name)!),
        ),
    );
    for (const list of lists) {
      const limit = list.parameters.find(
        ({ name, in: where }) => name === 'limit' && where === 'query',
      );
      const maximum = limit && resolveSchema(this.target.document, limit.schema).maximum;
      let url: string | undefined = `/${fill(list).join('/')}${maximum ? `?limit=${maximum}` : ''}`;
      for (let page = 0; url && page < MAX_PAGES; page++) {
        const response = await this.readOrExplain(url, context);
        if (response.statusCode !== 200) {
          throw new Error(
            `${context}: GET ${url} answered ${response.statusCode}: ${response.body}`,
          );
        }
        this.rememberIssued(response);
        url = nextPage(response);
      }
    }
  }

  /** A read-back GET; an answer breaking the document names what was read back after what. */
  private async readOrExplain(url: string, context: string): Promise<LightMyRequestResponse> {
    try {
      return await this.target.send({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${this.target.token}` },
      });
    } catch (error) {
      throw new Error(`${context}, reading back GET ${url}: ${(error as Error).message}`);
    }
  }
}

/** The request's method and URL, its query included. */
function described({ method, url, query }: Sent['request']): string {
  const search = new URLSearchParams(query as Record<string, string>).toString();
  return `${method} ${url}${search ? `?${search}` : ''}`;
}

/** Which statuses may answer a request of this kind and verdict. */
function expectedStatuses(kind: Kind, verdict: Verdict) {
  const below500 = (status: number) => status < 500;
  if (kind === 'anonymous') return { what: 'without a token', accepts: (s: number) => s === 401 };
  if (verdict === 'invalid')
    return { what: 'the document refuses', accepts: (s: number) => s >= 400 && s < 500 };
  if (verdict === 'valid') {
    return {
      what: 'the document accepts',
      accepts: (s: number) => (s >= 200 && s < 300) || s === 409,
    };
  }
  return { what: 'of any kind', accepts: below500 };
}

/** The id of the item a create made: the answer's `id`, its Location's last segment, or the request's `id`. */
function createdId(response: LightMyRequestResponse, requestBody: unknown): unknown {
  const answered = response.body === '' ? undefined : parse(response.body, null, parseJsonNumber);
  if (answered && typeof answered === 'object' && 'id' in answered) return answered.id;
  const location = response.headers.location;
  if (typeof location === 'string') return decodeURIComponent(location.split('/').at(-1)!);
  return (requestBody as { id?: unknown } | undefined)?.id;
}

/** A JSON object's members as JSON text (ints exact), or undefined for any other body. */
function fieldsOf(body: string): Record<string, string> | undefined {
  const value = body === '' ? undefined : parse(body, null, parseJsonNumber);
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [name, stringifyJson(member)]),
  );
}

/** The members of a write's answer that its request body wrote, as JSON text. */
function writtenFields(
  requestBody: unknown,
  response: LightMyRequestResponse,
): Record<string, string> {
  const answered = fieldsOf(response.body) ?? {};
  const names = requestBody && typeof requestBody === 'object' ? Object.keys(requestBody) : [];
  return Object.fromEntries(
    names.filter((name) => name in answered).map((name) => [name, answered[name]]),
  );
}

/** The URL of the `Link` header's `rel="next"`, if any. */
function nextPage(response: LightMyRequestResponse): string | undefined {
  const link = response.headers.link;
  return typeof link === 'string' ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}
