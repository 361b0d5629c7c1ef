import fc from 'fast-check';
import { INT64_MAX, INT64_MIN } from '../../src/common/validation/is-int64.decorator.js';
import type { OpenApiDocument } from './openapi-contract.js';

type Schema = Record<string, unknown>;

/**
 * Text as the contract takes it: any Unicode scalar value but U+0000 (the one character
 * the contract refuses although the schema allows it), counted in code points.
 */
export const TEXT_UNIT = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 1 })
  .filter((character) => character !== '\u0000');

/**
 * Values valid under a schema of the served OpenAPI document: objects, strings, int32
 * and int64 integers (as `bigint`), references to `#/components/schemas/…`. Objects get
 * unknown properties now and then, which the schemas allow. Anything else is refused
 * loudly, so that a document growing beyond this never goes untested unnoticed.
 */
export function arbitraryFromSchema(
  document: OpenApiDocument,
  schema: Schema,
): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return arbitraryFromSchema(document, document.components!.schemas![name]);
  }
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties as Record<string, Schema>;
      const declared = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [
            name,
            arbitraryFromSchema(document, property),
          ]),
        ),
        { requiredKeys: (schema.required as string[] | undefined) ?? [] },
      );
      const unknown = fc.dictionary(
        fc.string({ maxLength: 10 }).filter((key) => !(key in properties)),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 2 },
      );
      return fc.tuple(declared, unknown).map(([known, extra]) => ({ ...extra, ...known }));
    }
    case 'string':
      return fc.string({
        unit: TEXT_UNIT,
        minLength: (schema.minLength as number | undefined) ?? 0,
        maxLength: (schema.maxLength as number | undefined) ?? 300,
      });
    case 'integer':
      if (schema.format === 'int64') return fc.bigInt(INT64_MIN, INT64_MAX);
      return fc.integer({
        min: (schema.minimum as number | undefined) ?? -(2 ** 31),
        max: (schema.maximum as number | undefined) ?? 2 ** 31 - 1,
      });
    default:
      throw new Error(`no generator for the schema ${JSON.stringify(schema)}`);
  }
}

/** The schema of an operation's JSON request body, or of one of its parameters. */
export function operationSchema(
  document: OpenApiDocument,
  method: string,
  path: string,
  parameter?: string,
): Schema {
  const operation = document.paths[path][method] as unknown as {
    parameters: Array<{ name: string; schema: Schema }>;
    requestBody: { content: { 'application/json': { schema: Schema } } };
  };
  if (parameter === undefined) return operation.requestBody.content['application/json'].schema;
  return operation.parameters.find((candidate) => candidate.name === parameter)!.schema;
}
