import { readFile, writeFile } from 'node:fs/promises';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

/**
 * `npm run generate`: the client's types from the service's document (openapi.json at the
 * repository root, written by the root's `npm run openapi`). openapi-typescript types int64
 * as `number`, which cannot hold an id past 2^53, and has no option for `bigint`: its
 * `transform` hook makes every int64 a `bigint`. `--check` writes nothing and fails when the
 * committed types differ from what the document generates.
 */
const DOCUMENT = new URL('../../../openapi.json', import.meta.url);
const TYPES = new URL('../src/generated/plant-store-api.ts', import.meta.url);
const HEADER = '// Generated from openapi.json by `npm run generate`; do not edit.\n\n';

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
const ast = await openapiTS(DOCUMENT, {
  transform: (schema) => (schema.format === 'int64' ? BIGINT : undefined),
});
const types = HEADER + astToString(ast);

if (!process.argv.includes('--check')) {
  await writeFile(TYPES, types);
} else if ((await readFile(TYPES, 'utf8')) !== types) {
  process.stderr.write(
    'packages/client/src/generated/plant-store-api.ts differs from what openapi.json generates: run `npm run openapi` at the repository root\n',
  );
  process.exitCode = 1;
}
