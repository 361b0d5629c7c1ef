/**
 * Builds an error without capturing a stack trace, for the answers to a client's own
 * mistake that anyone can provoke before or at authentication (401, 403, 429): their
 * stack is never logged (the error filter logs stacks of 5xx only), and capturing it,
 * through the request's chain of awaits, was about a quarter of the CPU a 401 costs
 * (docs/performance.md). Anonymous floods are made of such answers.
 */
export function withoutStackTrace<T extends Error>(create: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return create();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
