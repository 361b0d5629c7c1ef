// Generated from openapi.json by `npm run generate`; do not edit.

/** The document's int64 properties, by name: read as bigint. */
export const INT64_PROPERTIES: ReadonlySet<string> = new Set(['id']);
