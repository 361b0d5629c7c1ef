// Loaded with `node --import` before a process's own code: writes `loaded <url>` to
// stderr for every module of the packages named in REPORT_LOADED_MODULES (a regular
// expression) that the process loads, by import or by require.
import { registerHooks } from 'node:module';

const pattern = new RegExp(process.env.REPORT_LOADED_MODULES ?? '$^');
const reported = new Set();

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (pattern.test(resolved.url) && !reported.has(resolved.url)) {
      reported.add(resolved.url);
      process.stderr.write(`loaded ${resolved.url}\n`);
    }
    return resolved;
  },
});
