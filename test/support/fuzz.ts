import type { Parameters } from 'fast-check';

/** The seed CI runs with, so that a red build can be replayed exactly. */
const CI_SEED = 20_261_121;

/**
 * fast-check's parameters for a property. In CI (no FUZZ_* variables) `ciRuns` runs
 * from a fixed seed. `npm run fuzz` sets FUZZ_RUNS: then each property runs that many
 * times divided by `costPerRun` (a run of an expensive property counts as that many
 * cheap ones), from FUZZ_SEED or, without it, a random seed that is printed.
 */
export function fuzzParameters<T>(ciRuns: number, costPerRun = 1): Parameters<T> {
  const longRuns = process.env.FUZZ_RUNS;
  if (longRuns === undefined) return { seed: CI_SEED, numRuns: ciRuns };
  const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const numRuns = Math.max(ciRuns, Math.floor(Number(longRuns) / costPerRun));
  process.stdout.write(`fuzzing ${numRuns} runs with FUZZ_SEED=${seed}\n`);
  return { seed, numRuns };
}
