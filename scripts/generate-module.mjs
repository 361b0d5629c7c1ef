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
  'usage: npm run generate:module -- <name-in-kebab-case> [--singular <name>] [--parent plants] [--field <name>:<type>[:<limits>][?] ...]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    singular: { type: 'string' },
    parent: { type: 'string' },
    field: { type: 'string', multiple: true },
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

const fields = (values.field ?? ['name:text:1..255']).map(parseField);
const names = fields.map(({ name }) => name);
if (new Set(names).size !== names.length) fail('--field: each name once');

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
  required: fields.filter(({ optional }) => !optional),
  migrationClass,
  migrationFile,
  fkey: `${n.table}_plant_id_fkey`,
  pageIndex: `${n.table}_plant_id_id_idx`,
  entityFields: `${n.Singular}Fields`,
  typeormImports: [
    'Column',
    'CreateDateColumn',
    'Entity',
    'PrimaryGeneratedColumn',
    ...(parent ? ['ForeignKey', 'Index'] : []),
  ]
    .sort()
    .join(', '),
  usesBigint: Boolean(parent) || fields.some(({ entityType }) => entityType === 'bigint'),
  decoratorImports: Object.entries(DECORATOR_FILES).filter(([name]) => used.has(name)),
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

for (const template of templatesIn(TEMPLATES)) {
  const text = ejs.render(readFileSync(join(TEMPLATES, template), 'utf8'), model, {
    filename: join(TEMPLATES, template),
    // Nothing is HTML: values are written as they are; a missing one is a template's mistake.
    escape: (value) => {
      if (value === undefined) throw new Error(`${template}: a value is undefined`);
      return String(value);
    },
  });
  const path = join(ROOT, outputPath(template));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Adds an import after a file's last one, and `entry` at the end of the list `listStart` opens. */
function register(path, importLine, listStart, entry) {
  let text = readFileSync(join(ROOT, path), 'utf8');
  const lastImport = [...text.matchAll(/^import .*?;$/gms)].at(-1);
  const afterImports = lastImport.index + lastImport[0].length;
  text = `${text.slice(0, afterImports)}\n${importLine}${text.slice(afterImports)}`;
  const start = text.indexOf(listStart);
  if (start < 0) throw new Error(`${path}: "${listStart}" not found`);
  const close = text.indexOf(']', start);
  const body = text.slice(start + listStart.length, close).trimEnd();
  const separator = body.endsWith(',') ? ' ' : ', ';
  text = `${text.slice(0, start + listStart.length)}${body}${separator}${entry}${text.slice(close)}`;
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
  `src/${plural}`,
  `migrations/${migrationFile}.ts`,
  `test/e2e/${plural}.e2e-spec.ts`,
  'src/app.module.ts',
  'src/app.scopes.ts',
  'src/app.schema.ts',
);
if (!values['skip-openapi']) run('run', '--silent', 'openapi');
console.log(
  `src/${plural}/ written, registered in src/app.*.ts, README's scopes updated; test: npm run test:e2e -- test/e2e/${plural}.e2e-spec.ts`,
);
