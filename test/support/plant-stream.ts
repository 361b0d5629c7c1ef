import type { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { send } from './built-service.js';

/** A plant as a client sent it; the id in decimal digits, so that no digit is lost. */
export interface SentPlant {
  id: string;
  name: string;
  tag?: string;
}

/** Names that only survive a round trip byte for byte if nothing on the way mangles them. */
const NAMES = [
  'Monstera deliciosa',
  'Crème brûlée',
  'Cre\u0300me bru\u0302le\u0301e',
  '🌵🪴🌿',
  '👩‍🌾 and 🧑🏽‍🌾',
  'שָׁלוֹם',
  '仙人掌',
  'tab\t"quotes" \\ and \u2028',
  '\u{10FFFD} the last code point',
];
const TAGS = [undefined, '', 'tropical', 'Ünïcödé', '🌱'];

/** Multiplying by an odd number is a bijection on 64 bits: distinct n, distinct ids. */
const SPREAD = 0x9e3779b97f4a7c15n;

/**
 * The n-th plant of a stream: ids spread over the whole signed 64-bit range (no two
 * alike), names and tags in odd Unicode.
 */
export function streamPlant(n: number): SentPlant {
  const id = BigInt.asIntN(64, BigInt(n) * SPREAD).toString();
  const name = `${NAMES[n % NAMES.length]} #${n}`;
  const tag = TAGS[n % TAGS.length];
  return tag === undefined ? { id, name } : { id, name, tag };
}

/** The JSON body of a create, the id written as its exact digits. */
export function plantBody({ id, name, tag }: SentPlant): string {
  const tagMember = tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`;
  return `{"id":${id},"name":${JSON.stringify(name)}${tagMember}}`;
}

/** How one create ended: an HTTP answer, or the client's error (connection refused or cut). */
export interface CreateOutcome {
  plant: SentPlant;
  status?: number;
  body?: string;
  error?: string;
  /** From sending the request to its outcome. */
  ms: number;
}

/**
 * Creates plants `streamPlant(first)`, `streamPlant(first + 1)`, … from `workers`
 * clients at once, each request on a connection of its own (or `agent`'s), until `done()` says so.
 * Never throws: every outcome is handed to `observe` as it comes, and all are returned.
 */
export async function streamCreates(
  url: string,
  token: string,
  options: {
    workers: number;
    first: number;
    done: () => boolean;
    observe?: (outcome: CreateOutcome) => void;
    /** Pause between one worker's requests, for a steady rather than a maximal load. */
    pauseMs?: number;
    /** Where the connections come from, e.g. a keep-alive agent; none: one per request. */
    agent?: Agent;
  },
): Promise<CreateOutcome[]> {
  const outcomes: CreateOutcome[] = [];
  let next = options.first;
  const worker = async () => {
    while (!options.done()) {
      const plant = streamPlant(next++);
      const started = performance.now();
      const outcome: CreateOutcome = await send(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: plantBody(plant),
        agent: options.agent,
      }).then(
        ({ status, body }) => ({ plant, status, body, ms: performance.now() - started }),
        (error: Error) => ({ plant, error: error.message, ms: performance.now() - started }),
      );
      outcomes.push(outcome);
      options.observe?.(outcome);
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  return outcomes;
}

/** The plants the service answered 200 for. */
export function acknowledged(outcomes: CreateOutcome[]): SentPlant[] {
  return outcomes.filter((outcome) => outcome.status === 200).map((outcome) => outcome.plant);
}

/** Rows as `SELECT id::text, name, tag` reads them, shaped like the plants sent. */
export function asSentPlants(rows: Array<{ id: string; name: string; tag: string | null }>) {
  return rows.map(({ id, name, tag }): SentPlant =>
    tag === null ? { id, name } : { id, name, tag },
  );
}
