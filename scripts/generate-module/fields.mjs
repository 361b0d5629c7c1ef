// The fields of `npm run generate:module`: each --field as every generated file writes it.

/** Ends the generator with a message for the person running it. */
export function fail(message) {
  console.error(message);
  process.exit(2);
}

const camelToSnake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camelToWords = (name) => name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
/** The longest varchar PostgreSQL takes. */
const VARCHAR_MAX = 10_485_760;
const INT64_MIN = '-(2n ** 63n)';
const INT64_MAX = '2n ** 63n - 1n';
export const js = (value) => JSON.stringify(value);
export const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `min..max` as two integers, or `defaults` when absent. */
function limits(spec, defaults, what) {
  if (spec === undefined) return defaults;
  const match = /^(-?\d+)\.\.(-?\d+)$/.exec(spec);
  if (!match) fail(`${what}: limits are written min..max, as 1..200`);
  const [min, max] = [Number(match[1]), Number(match[2])];
  if (min > max) fail(`${what}: ${spec}: the least limit first`);
  return { min, max };
}

/**
 * A field of the command line, as each generated file writes it: `column` (SQL), the
 * entity's `entityType`, `wire` (the answer's TypeScript type and the expression from an
 * entity value `v`), the body's decorator and type, and the test's values: a typical one,
 * values at its limits (taken), and values past them (refused, with the message).
 */
export function parseField(text) {
  const match = /^([a-z][a-zA-Z0-9]*):([a-z0-9-]+)(?::([^?]*))?(\?)?$/.exec(text);
  if (!match)
    fail(`--field ${text}: write <name>:<type>[:<limits>][?], as weightGrams:int:1..100000`);
  const [, name, type, spec, optional] = match;
  if (['id', 'plantId', 'createdAt'].includes(name))
    fail(`--field ${name}: the module has it already`);
  const what = `--field ${text}`;
  const description = camelToWords(name).replace(/^./, (c) => c.toUpperCase());
  const field = { name, column: camelToSnake(name), optional: Boolean(optional), description };
  const options = `{ description: ${js(description)}${optional ? ', required: false' : ''} }`;
  switch (type) {
    case 'text': {
      const { min, max } = limits(spec, { min: 1, max: 255 }, what);
      if (min < 0 || max < 1 || max > VARCHAR_MAX)
        fail(`${what}: lengths from 0 to ${VARCHAR_MAX}`);
      const typical = 'x'.repeat(Math.max(min, Math.min(max, 5)));
      return {
        ...field,
        sql: `varchar(${max})`,
        columnOptions: `type: 'varchar', length: ${max}`,
        entityType: 'string',
        wireType: 'string',
        wire: (v) => v,
        schema: `type: 'string', minLength: ${min}, maxLength: ${max}`,
        decorator: `@TextProperty({ min: ${min}, max: ${max} }, ${options})`,
        imports: ['TextProperty'],
        inputType: 'string',
        typical: js(typical),
        // Code points that are two UTF-16 units each: the column counts code points.
        edges: [...new Set([min, max])].map((length) => `'🌱'.repeat(${length})`),
        refused: [
          ...(min > 0
            ? [[js('x'.repeat(min - 1)), `must be ${min} to ${max} characters long`]]
            : []),
          [`'x'.repeat(${max + 1})`, `must be ${min} to ${max} characters long`],
          [js('x\u0000'), 'must not contain the character U+0000'],
          ['5', 'must be a string'],
        ],
      };
    }
    case 'int': {
      const { min, max } = limits(spec, INT32, what);
      if (min < INT32.min || max > INT32.max) {
        fail(`${what}: an int column holds ${INT32.min}..${INT32.max}; use int64 beyond`);
      }
      const rule = `must be an integer from ${min} to ${max}`;
      return {
        ...field,
        sql: 'integer',
        columnOptions: `type: 'integer'`,
        entityType: 'number',
        wireType: 'number',
        wire: (v) => v,
        schema: `type: 'integer', format: 'int32', minimum: ${min}, maximum: ${max}`,
        decorator: `@IntegerProperty({ min: ${min}, max: ${max} }, ${options})`,
        imports: ['IntegerProperty'],
        inputType: 'number',
        typical: String(Math.max(min, Math.min(max, 5))),
        edges: [...new Set([min, max])].map(String),
        refused: [
          [String(min - 1), rule],
          [String(max + 1), rule],
          ['1.5', rule],
          [js(String(min)), rule],
        ],
        integer: true,
      };
    }
    case 'int64':
      return {
        ...field,
        sql: 'bigint',
        columnOptions: `type: 'bigint', transformer: bigintTransformer`,
        entityType: 'bigint',
        wireType: 'bigint',
        wire: (v) => v,
        schema: '...INT64_SCHEMA',
        decorator: `@Int64Property(${options})`,
        imports: ['Int64Property'],
        inputType: 'bigint',
        typical: '5n',
        edges: [INT64_MIN, INT64_MAX],
        refused: [
          ['2n ** 63n', 'must be an integer from'],
          ['1.5', 'must be an integer from'],
          [js('5'), 'must be an integer from'],
        ],
      };
    case 'boolean':
      return {
        ...field,
        sql: 'boolean',
        columnOptions: `type: 'boolean'`,
        entityType: 'boolean',
        wireType: 'boolean',
        wire: (v) => v,
        schema: `type: 'boolean'`,
        decorator: `@BooleanProperty(${options})`,
        imports: ['BooleanProperty'],
        inputType: 'boolean',
        typical: 'true',
        edges: ['false'],
        refused: [
          [js('true'), 'must be a boolean value'],
          ['1', 'must be a boolean value'],
        ],
      };
    case 'date-time':
      return {
        ...field,
        sql: 'timestamptz',
        columnOptions: `type: 'timestamptz'`,
        entityType: 'Date',
        wireType: 'string',
        wire: (v) => `${v}.toISOString()`,
        testWire: (v) => `${v}${optional ? '?' : ''}.toISOString()`,
        schema: `type: 'string', format: 'date-time'`,
        decorator: `@DateTimeProperty(${options})`,
        imports: ['DateTimeProperty'],
        inputType: 'Date',
        typical: `new Date('2026-07-01T12:30:00.000Z')`,
        edges: [`new Date('0001-01-01T00:00:00.000Z')`, `new Date('9999-12-31T23:59:59.999Z')`],
        refused: [
          [js('9999-12-31T23:59:59.999-23:59'), 'must fall in the years 0001 to 9999'],
          ...['2026-07-01', '2026', '2026-07-01T12:30:00', '2026-W27-3', '20260701'].map(
            (value) => [js(value), 'must be an RFC 3339 date-time with an offset'],
          ),
        ],
        // Taken with an offset, answered in UTC.
        offsetForm: ['2026-07-01T14:30:00.5+02:00', '2026-07-01T12:30:00.500Z'],
      };
    case 'enum': {
      const choices = (spec ?? '').split('|');
      if (!spec || choices.some((choice) => !/^[A-Za-z0-9][\w-]*$/.test(choice))) {
        fail(`${what}: list the values, as grade:enum:a|b|c (letters, digits, _ and -)`);
      }
      const union = choices.map(js).join(' | ');
      const longest = Math.max(...choices.map((choice) => choice.length));
      const outsider = `${choices[0]}-not`;
      return {
        ...field,
        sql: `varchar(${longest})`,
        columnOptions: `type: 'varchar', length: ${longest}`,
        entityType: union,
        wireType: union,
        wire: (v) => v,
        schema: `type: 'string', enum: ${js(choices).replaceAll('"', "'")}`,
        decorator: `@EnumProperty(${js(choices).replaceAll('"', "'")}, ${options})`,
        imports: ['EnumProperty'],
        inputType: union,
        typical: js(choices[0]),
        edges: choices.map(js),
        refused: [[js(outsider), `must be one of: ${choices.join(', ')}`]],
      };
    }
    default:
      return fail(`${what}: the types are text, int, int64, boolean, date-time and enum`);
  }
}
