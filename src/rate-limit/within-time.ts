/**
 * `work`'s value when it settles within `ms`, else `undefined` (its rejection is passed
 * on either way, so a late one is never unhandled). A timer runs late when the event loop
 * was busy; before deciding that time ran out, the answers that arrived meanwhile are
 * read (setImmediate runs after the I/O phase), so a busy process does not mistake its
 * own delay for the other side's.
 */
export function withinTime<T>(work: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => resolve(undefined)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve({ value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
