/**
 * Where `npm run backup` and `npm run restore` start, as bundled by scripts/bundle-cli.mjs:
 * Node.js's compile cache goes on first, so that the command (backup.cli.ts), loaded
 * after it, is compiled from the cache. Unbundled, it starts the same command the same way.
 */
import './compile-cache.js';

await import('./backup.cli.js');
