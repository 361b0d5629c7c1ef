import { readFileSync } from 'node:fs';

/** The version package.json gives the service. */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/**
 * The revision the service reports without PLANT_STORE_REVISION: its clone's commit, or
 * `unknown` outside one.
 */
export const CHECKOUT_REVISION = /^([0-9a-f]{40}|unknown)$/;
