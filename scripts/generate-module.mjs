// npm run generate:module -- <name> [--parent plants] [--field <name>:<type>[:<limits>][?] ...]:
// a whole resource that follows every convention of docs/extending.md, ready to extend:
// its folder (module, controller, service, repository, entity, DTOs, scopes, schema), a
// migration its entity matches, an e2e test, and the three registrations at the
// application's edge; then the generated documents (npm run openapi).
// <name> is the resource's plural in kebab case (`care-notes`); `--singular care-note`
// when dropping a final "s" does not make the singular. Operations: create, list a page
// at a time (limit, cursor, Link), get, replace (PUT) and delete. `--parent plants`
// makes each one belong to a plant: create and list are /plants/{id}/<name>, 404 for a
// missing plant (also when a create races the plant's delete), a foreign key and its index.
// Each --field goes into the entity, the migration, the DTOs, the document and the test:
//   text[:min..max]   varchar(max), 1..255 unless given          TextProperty
//   int[:min..max]    integer, within int4 (the whole of it unless given)  IntegerProperty
//   int64             bigint                                     Int64Property
//   boolean           boolean                                    BooleanProperty
//   date-time         timestamptz, RFC 3339 with an offset       DateTimeProperty
//   enum:a|b|c        varchar(longest value)                     EnumProperty
// A final `?` makes it optional (absent: null in the table, absent from the answers).
// Without --field, one field: name:text:1..255.
// The files are templates in scripts/generate-module/templates/, laid out as they are
// written (`__plural__`: the module's name); this script reads the command line into the
// model they see (names, fields, paths) and registers the module.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ejs from 'ejs';
import { escapeRegExp, fail, js, parseField } from './generate-module/fields.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
/**
 * The files a module is made of, laid out as they are written: `__plural__` in a path is
 * the module's name, `.template` is dropped. Rendered with EJS, `<%= %>` unescaped.
 */
const TEMPLATES = new URL('generate-module/templates/', import.meta.url).pathname;
const USAGE =
  'usage: npm run generate:module -- <name-in-kebab-case> [--singular <name>] [--parent plants] [--field <name>:<type>[:<limits>][?|=<default>] ...] [--describe <field>="<text>" ...] [--filter <field>,...] [--order <field>]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    singular: { type: 'string' },
    parent: { type: 'string' },
    field: { type: 'string', multiple: true },
    describe: { type: 'string', multiple: true },
    filter: { type: 'string', multiple: true },
    order: { type: 'string' },
    'skip-openapi': { type: 'boolean' },
  },
});
const [plural] = positionals;
if (!plural || !/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(plural) || positionals.length > 1) {
  fail(USAGE);
}
const singular = values.singular ?? plural.replace(/s$/, '');
if (singular === plural) fail(`give the singular of "${plural}": --singular <name>`);

const parent = values.parent;
if (parent !== undefined && parent !== 'plants') {
  fail('--parent: plants is the one module that exports a reader (PlantsReader)');
}

const pascal = (kebab) => kebab.replace(/(^|-)([a-z0-9])/g, (_, __, c) => c.toUpperCase());
const camel = (kebab) => pascal(kebab).replace(/^./, (c) => c.toLowerCase());
const snake = (kebab) => kebab.replaceAll('-', '_');
const words = (kebab) => kebab.replaceAll('-', ' ');
const capitalized = (text) => text.replace(/^./, (c) => c.toUpperCase());
const n = {
  plural,
  singular,
  Plural: pascal(plural),
  Singular: pascal(singular),
  plurals: camel(plural),
  singularCamel: camel(singular),
  table: snake(plural),
  CONST: snake(plural).toUpperCase(),
  pluralWords: words(plural),
  singularWords: words(singular),
};

/** --describe name="text", by field name. */
const descriptions = new Map(
  (values.describe ?? []).map((text) => {
    const match = /^([a-z][a-zA-Z0-9]*)=(.+)$/s.exec(text);
    if (!match) fail(`--describe ${text}: write <field>="<what it is>"`);
    return [match[1], match[2]];
  }),
);
const fields = (values.field ?? ['name:text:1..255']).map((text) =>
  parseField(text, {
    subject: n.singularWords,
    subjects: n.pluralWords,
    describe: descriptions.get(text.split(':')[0]),
  }),
);
const names = fields.map(({ name }) => name);
if (new Set(names).size !== names.length) fail('--field: each name once');
const fieldNamed = (name, option) =>
  fields.find((field) => field.name === name) ??
  fail(`${option} ${name}: no such --field (${names.join(', ')})`);
for (const name of descriptions.keys()) fieldNamed(name, '--describe');

const filters = (values.filter ?? [])
  .flatMap((list) => list.split(','))
  .map((name) => {
    const field = fieldNamed(name, '--filter');
    if (!field.filter) fail(`--filter ${name}: a ${field.sql} field is not filtered by equality`);
    return field;
  });
if (new Set(filters).size !== filters.length) fail('--filter: each field once');
for (const { name, ordered } of filters) {
  if (new Set(ordered).size < 2) fail(`--filter ${name}: the field holds one value only`);
}
const order = values.order === undefined ? undefined : fieldNamed(values.order, '--order');
if (order?.optional) {
  fail(
    `--order ${order.name}: an optional field has no place in an order (null): make it required`,
  );
}

const timestamp = Date.now();
const migrationClass = `Create${n.Plural}${timestamp}`;
const migrationFile = `${timestamp}-Create${n.Plural}`;
if (existsSync(join(ROOT, 'src', plural))) {
  console.error(`src/${plural} exists already`);
  process.exit(1);
}

/** The decorators' files, for the body DTO's imports. */
const DECORATOR_FILES = {
  TextProperty: 'text-property.decorator.js',
  IntegerProperty: 'integer-property.decorator.js',
  Int64Property: 'int64-property.decorator.js',
  BooleanProperty: 'boolean-property.decorator.js',
  DateTimeProperty: 'date-time.decorator.js',
  EnumProperty: 'enum-property.decorator.js',
};
const used = new Set(fields.flatMap(({ imports }) => imports));
/** The columns of an index on the module's list, after `leading`: the order, then id. */
const listIndex = (...leading) => {
  const columns = [
    ...(parent ? ['plant_id'] : []),
    ...leading,
    ...(order ? [order.column] : []),
    'id',
  ];
  const properties = [
    ...(parent ? ['plantId'] : []),
    ...leading.map((column) => fields.find((f) => f.column === column).name),
    ...(order ? [order.name] : []),
    'id',
  ];
  return { name: `${n.table}_${columns.join('_')}_idx`, columns, properties };
};
/**
 * The list's indexes: its order within a plant (which the foreign key's cascade uses
 * too) or across the table, and one per filter.
 */
const indexes = [
  ...(parent || order ? [listIndex()] : []),
  ...filters.map(({ column }) => listIndex(column)),
];
const collectionPath = parent ? `plants/{id}/${plural}` : plural;
const linkExample = `</${collectionPath.replace('{id}', '1')}?limit=20&cursor=MDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAw>; rel="next"`;

/** The generated e2e test's values: each field's typical value, its limits, its refusals. */
function testValues() {
  // Each field's limits, one create per value, the other fields typical.
  const edgeBodies = fields.flatMap(({ name, edges }) =>
    edges.map((edge) => `[${js(`${name} ${edge}`)}, { ...TYPICAL, ${name}: ${edge} }]`),
  );
  const refusals = fields.flatMap(({ name, refused }) => [
    ...refused.map(
      ([value, message]) => `[${js(name)}, ${js(value)}, ${value}, ${js(escapeRegExp(message))}]`,
    ),
    `[${js(name)}, 'null', null, 'must be']`,
  ]);
  return {
    typical: fields.map(({ name, typical }) => `${name}: ${typical}`).join(', '),
    answered: fields
      .map(({ name, wire, testWire }) => `${name}: ${(testWire ?? wire)(`body.${name}`)}`)
      .join(', '),
    edgeBodies,
    refusals,
    offsetForms: fields
      .filter(({ offsetForm }) => offsetForm)
      .map(({ name, offsetForm: [sent, utc] }) => `[${js(name)}, ${js(sent)}, ${js(utc)}]`),
    replacement: fields
      .filter(({ optional }) => !optional)
      .map(({ name, edges }) => `${name}: ${edges.at(-1)}`)
      .join(', '),
    defaults: fields
      .filter((field) => field.default)
      .map(({ name, default: { test } }) => [name, test]),
    ordered: order?.ordered ?? [],
    // JavaScript and every collation agree on these; enums' and text's order is the collation's.
    orderChecked: Boolean(order) && !['TEXT_KEY'].includes(order.codec),
    filterCases: filters.map(({ name, ordered }) => [name, ordered[0], ordered.at(-1)]),
    patchField: fields[0].name,
    patchValue: fields[0].edges.at(-1),
    removable: fields.find(({ optional }) => optional)?.name,
    mandatory: fields.find(({ optional }) => !optional)?.name,
    createPath: parent ? '`/plants/${plantId}/' + plural + '`' : `'/${plural}'`,
    collection: parent ? '`/plants/${PLANT_ID}/' + plural + '`' : `'/${plural}'`,
  };
}

/** What every template sees. */
const model = {
  n,
  S: n.Singular,
  parent,
  fields,
  names,
  required: fields.filter(({ required }) => required),
  migrationClass,
  migrationFile,
  fkey: `${n.table}_plant_id_fkey`,
  indexes,
  checks: fields
    .filter(({ choices }) => choices)
    .map(({ column, choices }) => ({
      name: `${n.table}_${column}_check`,
      expression: `${column} IN (${choices.map((choice) => `'${choice}'`).join(', ')})`,
    })),
  filters,
  order,
  entityFields: `${n.Singular}Fields`,
  typeormImports: [
    'Column',
    'CreateDateColumn',
    'Entity',
    'PrimaryGeneratedColumn',
    'UpdateDateColumn',
    ...(parent ? ['ForeignKey'] : []),
    ...(indexes.length > 0 ? ['Index'] : []),
    ...(fields.some(({ choices }) => choices) ? ['Check'] : []),
  ]
    .sort()
    .join(', '),
  usesBigint: Boolean(parent) || fields.some(({ entityType }) => entityType === 'bigint'),
  decoratorImports: Object.entries(DECORATOR_FILES).filter(([name]) => used.has(name)),
  filterImports: [...new Set(filters.flatMap(({ filter }) => filter.imports))].sort().join(', '),
  keyCodecs: [...new Set([order?.codec, 'UUID_KEY'].filter(Boolean))].sort(),
  paths: {
    collection: collectionPath.replace('{id}', ':id'),
    collectionDoc: `/${collectionPath}`,
    linkExample,
  },
  test: testValues(),
  js,
  capitalized,
};

/** A template's path relative to TEMPLATES, as the file it writes: `__plural__` → harvests. */
const outputPath = (template) =>
  template.replace(/__(\w+)__/g, (_, key) => model.n[key] ?? model[key]).replace(/\.template$/, '');

/** Every template under `folder`, as paths relative to TEMPLATES. */
function templatesIn(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? templatesIn(path) : [relative(TEMPLATES, path)];
  });
}

/** A template rendered with the model: `<%= %>` unescaped, a value left undefined an error. */
function render(template) {
  return ejs.render(readFileSync(template, 'utf8'), model, {
    filename: template,
    // Nothing is HTML: values are written as they are; a missing one is a template's mistake.
    escape: (value) => {
      if (value === undefined) throw new Error(`${template}: a value is undefined`);
      return String(value);
    },
  });
}

/** The files written, for prettier. */
const written = [];
for (const template of templatesIn(TEMPLATES)) {
  const text = render(join(TEMPLATES, template));
  // A template for what the module may lack (the list's filters) renders to nothing then.
  if (text.trim() === '') continue;
  const path = outputPath(template);
  mkdirSync(dirname(join(ROOT, path)), { recursive: true });
  writeFileSync(join(ROOT, path), text);
  written.push(path);
}

/**
 * Adds an import after a file's last one, and `entry` at the end of the list (or object)
 * `listStart` opens and `close` ends.
 */
function register(path, importLine, listStart, entry, close = ']') {
  let text = readFileSync(join(ROOT, path), 'utf8');
  const lastImport = [...text.matchAll(/^import .*?;$/gms)].at(-1);
  const afterImports = lastImport.index + lastImport[0].length;
  text = `${text.slice(0, afterImports)}\n${importLine}${text.slice(afterImports)}`;
  const start = text.indexOf(listStart);
  if (start < 0) throw new Error(`${path}: "${listStart}" not found`);
  const end = text.indexOf(close, start);
  const body = text.slice(start + listStart.length, end).trimEnd();
  const separator = body.trim() === '' || body.endsWith(',') ? ' ' : ', ';
  text = `${text.slice(0, start + listStart.length)}${body}${separator}${entry}${text.slice(end)}`;
  writeFileSync(join(ROOT, path), text);
}
register(
  'src/app.module.ts',
  `import { ${n.Plural}Module } from './${plural}/${plural}.module.js';`,
  'imports: [',
  `${n.Plural}Module,`,
);
register(
  'src/app.scopes.ts',
  `import { ${n.CONST}_SCOPES } from './${plural}/${plural}.scopes.js';`,
  'new GrantableScopes([',
  `...${n.CONST}_SCOPES`,
);
register(
  'src/app.schema.ts',
  `import { ${n.CONST}_SCHEMA } from './${plural}/${plural}.schema.js';`,
  'gatherSchemas([',
  `${n.CONST}_SCHEMA`,
);
// The typed client's operations for the module (store.<name>), and its types.
register(
  'packages/client/src/modules.ts',
  `import { ${n.plurals}Of } from './modules/${plural}.js';`,
  'export const MODULES = {',
  `${n.plurals}: ${n.plurals}Of,`,
  '}',
);
const clientIndex = join(ROOT, 'packages/client/src/index.ts');
writeFileSync(
  clientIndex,
  `${readFileSync(clientIndex, 'utf8')}export type {\n  ${[`List${n.Plural}Query`, n.Singular, `${n.Singular}Input`, `${n.Singular}Patch`, n.Plural, `${n.Plural}Page`].join(',\n  ')},\n} from './modules/${plural}.js';\n`,
);

/** `text` with `insertion` before the first line that starts with `before`. */
function insertBefore(path, before, insertion) {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const at = text.search(new RegExp(`^${escapeRegExp(before)}`, 'm'));
  if (at < 0) throw new Error(`${path}: no line starts with "${before}"`);
  writeFileSync(join(ROOT, path), `${text.slice(0, at)}${insertion}${text.slice(at)}`);
}
const INSERTIONS = new URL('generate-module/insertions/', import.meta.url).pathname;
// docs/api.md: the module's section; the README: its row in the API table.
insertBefore('docs/api.md', '## Errors', render(join(INSERTIONS, 'api-section.md.template')));
insertBefore(
  'README.md',
  '| `GET /openapi.json`',
  render(join(INSERTIONS, 'readme-api-row.md.template')),
);
// The README names every scope a token may be granted (test/unit/readme-scopes.spec.ts).
const readmePath = join(ROOT, 'README.md');
writeFileSync(
  readmePath,
  readFileSync(readmePath, 'utf8').replace(
    /(scopes \((?:`[\w-]+:[\w-]+`,\s*)*`[\w-]+:[\w-]+`)/,
    `$1, \`${plural}:read\`, \`${plural}:write\``,
  ),
);
// squawk prefers bigint to integer; these columns hold only what IntegerProperty takes.
const integers = fields.filter(({ integer }) => integer);
if (integers.length > 0) {
  const exceptionsPath = join(ROOT, 'migrations', 'lint-exceptions.json');
  const exceptions = JSON.parse(readFileSync(exceptionsPath, 'utf8'));
  exceptions.push({
    migration: migrationClass,
    direction: 'up',
    rule: 'prefer-bigint-over-int',
    reason: `${integers.map(({ column, name }) => `${column} holds only what ${name}'s IntegerProperty takes`).join('; ')}, within int4.`,
  });
  writeFileSync(exceptionsPath, `${JSON.stringify(exceptions, null, 2)}\n`);
}

const run = (...args) => execFileSync('npm', args, { cwd: ROOT, stdio: 'inherit' });
run(
  'exec',
  '--',
  'prettier',
  '--log-level',
  'warn',
  '--write',
  ...written,
  'src/app.module.ts',
  'src/app.scopes.ts',
  'src/app.schema.ts',
  'packages/client/src/modules.ts',
  'packages/client/src/index.ts',
);
if (!values['skip-openapi']) {
  run('run', '--silent', 'openapi');
  // The client the tests import: its new module, compiled.
  run('run', '--silent', 'build', '--workspace=@plant-store/client');
}
console.log(
  `src/${plural}/ written, registered in src/app.*.ts and the typed client, README (scopes, API table) and docs/api.md updated; test: npm run test:e2e -- test/e2e/${plural}.e2e-spec.ts`,
);
