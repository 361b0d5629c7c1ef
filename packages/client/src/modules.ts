import type { Api } from './answers.js';

/**
 * The operations of each module `npm run generate:module` added to the service, under the
 * client's property of its name (`store.harvests`); the generator registers each here.
 */
export const MODULES = {} satisfies Record<string, (api: Api) => object>;

/** The client's property for each generated module. */
export type Modules = { [Name in keyof typeof MODULES]: ReturnType<(typeof MODULES)[Name]> };
