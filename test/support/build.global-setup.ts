import { buildIfStale } from './built-service.js';

/**
 * Tests that spawn `node dist/src/main.js` need a build of the current sources, and those
 * that import the typed client a build of the client.
 */
export default async function setup(): Promise<void> {
  await buildIfStale();
}
