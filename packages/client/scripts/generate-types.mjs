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
const INT64_NAMES = new URL('../src/generated/int64-properties.ts', import.meta.url);
const HEADER = '// Generated from openapi.json by `npm run generate`; do not edit.\n\n';

/**
 * The names of the document's int64 properties, which the client reads as `bigint`
 * (src/json.ts reads by name). A name that is an int64 in one schema and another number in
 * another could not be read right in both: the generation fails on it.
 */
function int64PropertyNames(document) {
  const int64 = new Set();
  const otherNumbers = new Set();
  const visit = (schema) => {
    if (Array.isArray(schema)) return schema.forEach(visit);
    if (!schema || typeof schema !== 'object') return;
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const types = [property.type].flat();
      if (property.format === 'int64') int64.add(name);
      else if (types.includes('integer') || types.includes('number')) otherNumbers.add(name);
    }
    Object.values(schema).forEach(visit);
  };
  visit(document);
  const both = [...int64].filter((name) => otherNumbers.has(name));
  if (both.length > 0) {
    throw new Error(`int64 in one schema and another number in another: ${both.join(', ')}`);
  }
  return [...int64].sort();
}

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
const ast = await openapiTS(DOCUMENT, {
  transform: (schema) => (schema.format === 'int64' ? BIGINT : undefined),
});
const types = HEADER + astToString(ast);
const names = int64PropertyNames(JSON.parse(await readFile(DOCUMENT, 'utf8')));
const int64Names = `${HEADER}/** The document's int64 properties, by name: read as bigint. */\nexport const INT64_PROPERTIES: ReadonlySet<string> = new Set(${JSON.stringify(names).replaceAll('"', "'").replaceAll(',', ', ')});\n`;

for (const [file, text] of [
  [TYPES, types],
  [INT64_NAMES, int64Names],
]) {
  if (!process.argv.includes('--check')) {
    await writeFile(file, text);
  } else if ((await readFile(file, 'utf8')) !== text) {
    process.stderr.write(
      `packages/client/src/generated/${file.pathname.split('/').at(-1)} differs from what openapi.json generates: run \`npm run openapi\` at the repository root\n`,
    );
    process.exitCode = 1;
  }
}
