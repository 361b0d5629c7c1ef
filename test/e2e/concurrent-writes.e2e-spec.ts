import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzParameters } from '../support/fuzz.js';
import { plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Few ids and few contents, so that operations collide all the time. */
const PLANTS = 4;
const CLIENTS = 12;
const OPERATIONS_PER_CLIENT = 25;

interface Content {
  name: string;
  tag?: string;
}
/** A plant's state in the model: its content, or undefined when there is none. */
type State = Content | undefined;

/** An operation on the `plant`-th plant of a run (each run has plants of its own). */
type Operation =
  | { kind: 'create'; plant: number; content: Content }
  | { kind: 'replace'; plant: number; content: Content }
  | { kind: 'delete'; plant: number }
  | { kind: 'get'; plant: number };

/** An operation as a client saw it: when it was sent, when answered, and the answer. */
interface Call {
  operation: Operation;
  start: number;
  end: number;
  status: number;
  body: string;
}

const contentArbitrary: fc.Arbitrary<Content> = fc.record(
  { name: fc.constantFrom('Fern', 'Ivy'), tag: fc.constantFrom('green', '') },
  { requiredKeys: ['name'] },
);
const plant = fc.nat({ max: PLANTS - 1 });
const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), plant, content: contentArbitrary }),
  fc.record({ kind: fc.constant('replace' as const), plant, content: contentArbitrary }),
  fc.record({ kind: fc.constant('delete' as const), plant }),
  fc.record({ kind: fc.constant('get' as const), plant }),
);
/** What each client sends, one operation after the other. */
const scriptsArbitrary = fc.array(
  fc.array(operationArbitrary, {
    minLength: OPERATIONS_PER_CLIENT,
    maxLength: OPERATIONS_PER_CLIENT,
  }),
  { minLength: CLIENTS, maxLength: CLIENTS },
);

const same = (a: State, b: State) => JSON.stringify(a) === JSON.stringify(b);
const IMPOSSIBLE = Symbol('impossible');

/** A plant's content as an answer shows it (reads add the id). */
function contentOf(body: string): State {
  if (body === '') return undefined;
  const { name, tag } = JSON.parse(body) as Content;
  return tag === undefined ? { name } : { name, tag };
}

/**
 * The plant's state after `call` took effect on `state` all at once, or IMPOSSIBLE when
 * a store holding `state` could not have answered what the client got.
 */
function apply(state: State, { operation, status, body }: Call): State | typeof IMPOSSIBLE {
  const answer = contentOf(body);
  const possible = (condition: boolean, next: State) => (condition ? next : IMPOSSIBLE);
  switch (`${operation.kind} ${status}`) {
    case 'create 200': {
      const { content } = operation as { content: Content };
      const storedOrReplayed = state === undefined || same(state, content);
      return possible(storedOrReplayed && same(answer, content), content);
    }
    case 'create 409': {
      const { content } = operation as { content: Content };
      return possible(state !== undefined && !same(state, content), state);
    }
    case 'replace 200': {
      const { content } = operation as { content: Content };
      return possible(state !== undefined && same(answer, content), content);
    }
    case 'delete 204':
      return possible(state !== undefined, undefined);
    case 'get 200':
      return possible(state !== undefined && same(answer, state), state);
    case 'replace 404':
    case 'delete 404':
    case 'get 404':
      return possible(state === undefined, undefined);
    default:
      return IMPOSSIBLE;
  }
}

/**
 * Whether the calls on one plant can be put in one serial order that respects real time
 * (a call answered before another was sent comes first), explains every answer, and
 * ends in `final`: a depth-first search over the calls that may come next, remembering
 * the (calls done, state) pairs already explored (Wing & Gong, with Lowe's cache).
 */
function linearizable(calls: Call[], final: State): boolean {
  const explored = new Set<string>();
  const search = (done: bigint, count: number, state: State): boolean => {
    if (count === calls.length) return same(state, final);
    const key = `${done}:${JSON.stringify(state)}`;
    if (explored.has(key)) return false;
    explored.add(key);
    const pending = calls.filter((_, index) => !(done & (1n << BigInt(index))));
    const firstAnswer = Math.min(...pending.map((call) => call.end));
    return calls.some((call, index) => {
      if (done & (1n << BigInt(index)) || call.start > firstAnswer) return false;
      const next = apply(state, call);
      return next !== IMPOSSIBLE && search(done | (1n << BigInt(index)), count + 1, next);
    });
  };
  return search(0n, 0, undefined);
}

describe('concurrent creates, replaces and deletes of the same plants', () => {
  let api: TestApp;
  let client: PlantsClient;
  let lastId = 0;

  beforeAll(async () => {
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
  });
  afterAll(() => api.close());

  const call = async (operation: Operation, id: number): Promise<Call> => {
    const start = performance.now();
    const response = await (operation.kind === 'create'
      ? client.create({ id, ...operation.content })
      : operation.kind === 'replace'
        ? client.replace(id, operation.content)
        : operation.kind === 'delete'
          ? client.delete(id)
          : client.get(id));
    return {
      operation,
      start,
      end: performance.now(),
      status: response.statusCode,
      body: response.body,
    };
  };

  /** Each plant as stored: its content, or undefined when there is none. */
  const storedStates = async (ids: number[]): Promise<State[]> => {
    const rows = await api.database.query<{ id: string; name: string; tag: string | null }>(
      `SELECT id::text, name, tag FROM plants WHERE id IN (${ids.join(',')})`,
    );
    return ids.map((id) => {
      const row = rows.find((candidate) => Number(candidate.id) === id);
      return row && (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });
    });
  };

  it('leave every plant as some serial order of the answered operations would', async () => {
    await fc.assert(
      fc.asyncProperty(scriptsArbitrary, async (scripts) => {
        const ids = Array.from({ length: PLANTS }, () => ++lastId);
        const calls = await Promise.all(
          scripts.map(async (script) => {
            const answered: Call[] = [];
            for (const operation of script) {
              answered.push(await call(operation, ids[operation.plant]));
            }
            return answered;
          }),
        );
        const finalStates = await storedStates(ids);
        ids.forEach((id, plant) => {
          const history = calls.flat().filter((done) => done.operation.plant === plant);
          expect(
            linearizable(history, finalStates[plant]),
            `plant ${id}: ${JSON.stringify(history)}`,
          ).toBe(true);
        });
      }),
      // A failing history is in the message whole: shrinking one would take minutes.
      { ...fuzzParameters(3, 100), endOnFailure: true },
    );
  }, 120_000);
});

describe('the serial-order check itself', () => {
  const fern = { name: 'Fern' };
  const ivy = { name: 'Ivy', tag: 'green' };
  const at = (
    start: number,
    end: number,
    operation: Operation,
    status: number,
    answer?: Content,
  ): Call => ({
    operation,
    start,
    end,
    status,
    body: answer === undefined ? '' : JSON.stringify(answer),
  });

  it('accepts overlapping calls in the order that explains their answers', () => {
    const history = [
      at(0, 1, { kind: 'create', plant: 0, content: fern }, 200, fern),
      at(2, 10, { kind: 'replace', plant: 0, content: ivy }, 200, ivy),
      at(3, 4, { kind: 'get', plant: 0 }, 200, ivy),
      at(5, 6, { kind: 'get', plant: 0 }, 200, ivy),
    ];
    expect(linearizable(history, ivy)).toBe(true);
  });

  it('refuses a read of what a finished replace had already replaced', () => {
    const history = [
      at(0, 1, { kind: 'create', plant: 0, content: fern }, 200, fern),
      at(2, 3, { kind: 'replace', plant: 0, content: ivy }, 200, ivy),
      at(4, 5, { kind: 'get', plant: 0 }, 200, fern),
    ];
    expect(linearizable(history, ivy)).toBe(false);
  });

  it('refuses a stored plant no answered call wrote whole', () => {
    const history = [at(0, 1, { kind: 'create', plant: 0, content: ivy }, 200, ivy)];
    expect(linearizable(history, { name: 'Ivy' })).toBe(false);
  });
});
