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
/** A string as a TypeScript literal in single quotes. */
const quoted = (text) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
/** A string as an SQL literal. */
const sqlText = (text) => `'${text.replaceAll("'", "''")}'`;

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
 * What each type is: its column, its shapes in the entity, the body and the answer, the
 * shared decorator that validates it (given its options' text), its key in a cursor
 * (`--order`), its filter decorator (`--filter`), what it takes in words (a description
 * derived when none is given), how a default is read (`=value`), and the test's values:
 * a typical one, values at its limits (taken), values past them (refused, with the
 * message), and ascending values (`order`, for the order's and the filters' tests).
 */
function typeOf(type, spec, what, optional) {
  switch (type) {
    case 'text': {
      const { min, max } = limits(spec, { min: 1, max: 255 }, what);
      if (min < 0 || max < 1 || max > VARCHAR_MAX)
        fail(`${what}: lengths from 0 to ${VARCHAR_MAX}`);
      const typical = 'x'.repeat(Math.max(min, Math.min(max, 5)));
      const lengths = `must be ${min} to ${max} characters long`;
      return {
        sql: `varchar(${max})`,
        columnOptions: `type: 'varchar', length: ${max}`,
        entityType: 'string',
        wireType: 'string',
        wire: (v) => v,
        schema: `type: 'string', minLength: ${min}, maxLength: ${max}`,
        decorator: (options) => `@TextProperty({ min: ${min}, max: ${max} }, ${options})`,
        imports: ['TextProperty'],
        inputType: 'string',
        codec: 'TEXT_KEY',
        filter: {
          decorator: (options) => `@TextFilter({ min: ${min}, max: ${max} }, ${options})`,
          imports: ['TextFilter'],
        },
        rule: min === max ? `text of ${min} characters` : `text of ${min} to ${max} characters`,
        readDefault: (text) => {
          const length = [...text].length;
          if (length < min || length > max || text.includes('\u0000')) fail(`${what}: ${lengths}`);
          return { ts: quoted(text), sql: sqlText(text), test: js(text) };
        },
        typical: js(typical),
        // Code points that are two UTF-16 units each: the column counts code points.
        edges: [...new Set([min, max])].map((length) => `'🌱'.repeat(${length})`),
        refused: [
          ...(min > 0 ? [[js('x'.repeat(min - 1)), lengths]] : []),
          [`'x'.repeat(${max + 1})`, lengths],
          [js('x\u0000'), 'must not contain the character U+0000'],
          ['5', 'must be a string'],
        ],
        ordered: ['a', 'b', 'c'].map((letter) => js(letter.repeat(Math.max(min, 1)))),
        query: (v) => v,
      };
    }
    case 'int': {
      const { min, max } = limits(spec, INT32, what);
      if (min < INT32.min || max > INT32.max) {
        fail(`${what}: an int column holds ${INT32.min}..${INT32.max}; use int64 beyond`);
      }
      const rule = `must be an integer from ${min} to ${max}`;
      return {
        sql: 'integer',
        columnOptions: `type: 'integer'`,
        entityType: 'number',
        wireType: 'number',
        wire: (v) => v,
        schema: `type: 'integer', format: 'int32', minimum: ${min}, maximum: ${max}`,
        decorator: (options) => `@IntegerProperty({ min: ${min}, max: ${max} }, ${options})`,
        imports: ['IntegerProperty'],
        inputType: 'number',
        codec: 'INTEGER_KEY',
        filter: {
          decorator: (options) => `@IntegerFilter({ min: ${min}, max: ${max} }, ${options})`,
          imports: ['IntegerFilter'],
        },
        rule: `an integer from ${min} to ${max}`,
        readDefault: (text) => {
          const value = Number(text);
          if (!/^-?\d+$/.test(text) || value < min || value > max) fail(`${what}: ${rule}`);
          return { ts: String(value), sql: String(value), test: String(value) };
        },
        typical: String(Math.max(min, Math.min(max, 5))),
        edges: [...new Set([min, max])].map(String),
        refused: [
          [String(min - 1), rule],
          [String(max + 1), rule],
          ['1.5', rule],
          [js(String(min)), rule],
        ],
        ordered: [...new Set([min, Math.floor(min / 2 + max / 2), max])].map(String),
        query: (v) => `String(${v})`,
        integer: true,
      };
    }
    case 'int64': {
      const rule = 'must be an integer from';
      return {
        sql: 'bigint',
        columnOptions: `type: 'bigint', transformer: bigintTransformer`,
        entityType: 'bigint',
        wireType: 'bigint',
        wire: (v) => v,
        schema: '...INT64_SCHEMA',
        decorator: (options) => `@Int64Property(${options})`,
        imports: ['Int64Property'],
        inputType: 'bigint',
        codec: 'INT64_KEY',
        filter: { decorator: (options) => `@Int64Filter(${options})`, imports: ['Int64Filter'] },
        rule: 'a signed 64-bit integer',
        readDefault: (text) => {
          if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
            fail(`${what}: a default within ±(2^53 - 1), which the document writes exactly`);
          }
          return { ts: `${text}n`, sql: text, test: `${text}n` };
        },
        typical: '5n',
        edges: [INT64_MIN, INT64_MAX],
        refused: [
          ['2n ** 63n', rule],
          ['1.5', rule],
          [js('5'), rule],
        ],
        ordered: [INT64_MIN, '0n', INT64_MAX],
        query: (v) => `String(${v})`,
      };
    }
    case 'boolean':
      return {
        sql: 'boolean',
        columnOptions: `type: 'boolean'`,
        entityType: 'boolean',
        wireType: 'boolean',
        wire: (v) => v,
        schema: `type: 'boolean'`,
        decorator: (options) => `@BooleanProperty(${options})`,
        imports: ['BooleanProperty'],
        inputType: 'boolean',
        codec: 'BOOLEAN_KEY',
        filter: {
          decorator: (options) => `@BooleanFilter(${options})`,
          imports: ['BooleanFilter'],
        },
        rule: 'true or false',
        readDefault: (text) => {
          if (text !== 'true' && text !== 'false') fail(`${what}: true or false`);
          return { ts: text, sql: text, test: text };
        },
        typical: 'true',
        edges: ['false'],
        refused: [
          [js('true'), 'must be a boolean value'],
          ['1', 'must be a boolean value'],
        ],
        ordered: ['false', 'true'],
        query: (v) => `String(${v})`,
      };
    case 'date-time':
      return {
        sql: 'timestamptz(3)',
        columnOptions: `type: 'timestamptz', precision: 3`,
        entityType: 'Date',
        wireType: 'string',
        wire: (v) => `${v}.toISOString()`,
        testWire: (v) => `${v}${optional ? '?' : ''}.toISOString()`,
        schema: `type: 'string', format: 'date-time'`,
        decorator: (options) => `@DateTimeProperty(${options})`,
        imports: ['DateTimeProperty'],
        inputType: 'Date',
        codec: 'DATE_TIME_KEY',
        rule: 'an RFC 3339 date-time with an offset, kept to the millisecond',
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
        ordered: [
          `new Date('2026-07-01T12:30:00.001Z')`,
          `new Date('2026-07-01T12:30:00.002Z')`,
          `new Date('2026-07-02T00:00:00.000Z')`,
        ],
      };
    case 'enum': {
      const choices = (spec ?? '').split('|');
      if (!spec || choices.some((choice) => !/^[A-Za-z0-9][\w-]*$/.test(choice))) {
        fail(`${what}: list the values, as grade:enum:a|b|c (letters, digits, _ and -)`);
      }
      const union = choices.map(js).join(' | ');
      const longest = Math.max(...choices.map((choice) => choice.length));
      const outsider = `${choices[0]}-not`;
      const values = js(choices).replaceAll('"', "'");
      return {
        sql: `varchar(${longest})`,
        columnOptions: `type: 'varchar', length: ${longest}`,
        entityType: union,
        wireType: union,
        wire: (v) => v,
        schema: `type: 'string', enum: ${values}`,
        decorator: (options) => `@EnumProperty(${values}, ${options})`,
        imports: ['EnumProperty'],
        inputType: union,
        codec: 'TEXT_KEY',
        filter: {
          decorator: (options) => `@EnumFilter(${values}, ${options})`,
          imports: ['EnumFilter'],
        },
        rule: `one of ${choices.join(', ')}`,
        readDefault: (text) => {
          if (!choices.includes(text)) fail(`${what}: a default among ${choices.join(', ')}`);
          return { ts: quoted(text), sql: sqlText(text), test: js(text) };
        },
        choices,
        typical: js(choices[0]),
        edges: choices.map(js),
        refused: [[js(outsider), `must be one of: ${choices.join(', ')}`]],
        ordered: choices.map(js),
        query: (v) => v,
      };
    }
    default:
      return fail(`${what}: the types are text, int, int64, boolean, date-time and enum`);
  }
}

/**
 * A field of the command line (`name:type[:limits][?|=default]`), as each generated file
 * writes it: `column` (SQL), the entity's `entityType`, `wire` (the answer's TypeScript
 * type and the expression from an entity value `v`), the body's decorator and type (and
 * the merge patch's: every field may be left out, an optional one may be null), its
 * description (`describe`, or derived from its name and rule), and the test's values.
 * `subject` and `subjects`: the resource in words, for the descriptions.
 */
export function parseField(text, { subject, subjects, describe }) {
  const match = /^([a-z][a-zA-Z0-9]*):([a-z0-9-]+)(?::([^?=]*))?(?:(\?)|=(.*))?$/s.exec(text);
  if (!match) {
    fail(
      `--field ${text}: write <name>:<type>[:<limits>][?|=<default>], as weightGrams:int:1..100000 or paused:boolean=false`,
    );
  }
  const [, name, type, spec, optionalMark, defaultText] = match;
  if (['id', 'plantId', 'createdAt', 'updatedAt'].includes(name))
    fail(`--field ${name}: the module has it already`);
  const what = `--field ${text}`;
  const optional = Boolean(optionalMark);
  const kind = typeOf(type, spec, what, optional);
  if (defaultText !== undefined && !kind.readDefault) {
    fail(`${what}: a ${type} field takes no default (a constant instant is rarely one)`);
  }
  const fallback = defaultText === undefined ? undefined : kind.readDefault(defaultText);
  const words = camelToWords(name);
  const description =
    describe ??
    `${words.replace(/^./, (c) => c.toUpperCase())} of the ${subject}: ${kind.rule}` +
      (fallback ? `; ${defaultText} when left out` : '') +
      (optional ? '; absent when it has none' : '');
  const options = (extra) => `{ description: ${js(description)}${extra} }`;
  return {
    ...kind,
    name,
    column: camelToSnake(name),
    optional,
    description,
    /** Absent from a body: null (optional), its default, or refused (required). */
    required: !optional && !fallback,
    default: fallback,
    decorator: kind.decorator(
      options(
        optional
          ? ', required: false'
          : fallback
            ? `, required: false, default: ${fallback.ts}`
            : '',
      ),
    ),
    patchDecorator: kind.decorator(
      options(optional ? ', required: false, nullable: true' : ', required: false'),
    ),
    filter: kind.filter && {
      ...kind.filter,
      decorator: kind.filter.decorator(
        `{ description: ${js(`Only ${subjects} whose ${words} is this value`)} }`,
      ),
    },
  };
}
