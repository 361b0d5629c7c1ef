/** A signed 64-bit integer, written as the seed writes it. */
export const INT64_SCHEMA = { type: 'integer', format: 'int64' } as const;
