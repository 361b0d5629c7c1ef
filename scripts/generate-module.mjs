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
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = new URL('..', import.meta.url).pathname;
const USAGE =
  'usage: npm run generate:module -- <name-in-kebab-case> [--singular <name>] [--parent plants] [--field <name>:<type>[:<limits>][?] ...]';

function fail(message) {
  console.error(message);
  process.exit(2);
}

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
/** `text` when the module has a parent, else nothing. */
const withParent = (text) => (parent ? text : '');

const pascal = (kebab) => kebab.replace(/(^|-)([a-z0-9])/g, (_, __, c) => c.toUpperCase());
const camel = (kebab) => pascal(kebab).replace(/^./, (c) => c.toLowerCase());
const snake = (kebab) => kebab.replaceAll('-', '_');
const words = (kebab) => kebab.replaceAll('-', ' ');
const camelToSnake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camelToWords = (name) => name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
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
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
/** The longest varchar PostgreSQL takes. */
const VARCHAR_MAX = 10_485_760;
const INT64_MIN = '-(2n ** 63n)';
const INT64_MAX = '2n ** 63n - 1n';
const js = (value) => JSON.stringify(value);
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
function parseField(text) {
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

const fields = (values.field ?? ['name:text:1..255']).map(parseField);
const names = fields.map(({ name }) => name);
if (new Set(names).size !== names.length) fail('--field: each name once');
const required = fields.filter(({ optional }) => !optional);

const timestamp = Date.now();
const migrationClass = `Create${n.Plural}${timestamp}`;
const migrationFile = `${timestamp}-Create${n.Plural}`;
const dir = join(ROOT, 'src', plural);
if (existsSync(dir)) {
  console.error(`src/${plural} exists already`);
  process.exit(1);
}

const fkey = `${n.table}_plant_id_fkey`;
const pageIndex = `${n.table}_plant_id_id_idx`;
const S = n.Singular;
const entityFields = `${S}Fields`;
const lines = (items) => items.filter((item) => item !== '').join('\n');
const importsFrom = (names, path) =>
  names.length === 0 ? '' : `import { ${[...new Set(names)].sort().join(', ')} } from '${path}';`;

/** The decorators' imports of the body DTO, by file. */
const DECORATOR_FILES = {
  TextProperty: 'text-property.decorator.js',
  IntegerProperty: 'integer-property.decorator.js',
  Int64Property: 'int64-property.decorator.js',
  BooleanProperty: 'boolean-property.decorator.js',
  DateTimeProperty: 'date-time.decorator.js',
  EnumProperty: 'enum-property.decorator.js',
};
const used = new Set(fields.flatMap(({ imports }) => imports));
const inputImports = lines([
  "import { ApiSchema } from '@nestjs/swagger';",
  ...Object.entries(DECORATOR_FILES)
    .filter(([name]) => used.has(name))
    .map(([name, file]) => `import { ${name} } from '../../common/validation/${file}';`),
]);

const paths = parent
  ? {
      collection: `plants/:id/${plural}`,
      collectionDoc: `/plants/{id}/${plural}`,
      linkExample: `</plants/1/${plural}?limit=20&cursor=MDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAw>; rel="next"`,
    }
  : {
      collection: plural,
      collectionDoc: `/${plural}`,
      linkExample: `</${plural}?limit=20&cursor=MDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAw>; rel="next"`,
    };

const files = {
  [`src/${plural}/${plural}.module.ts`]: `import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
${withParent("import { PlantsModule } from '../plants/plants.module.js';\n")}import { ${S} } from './entities/${singular}.entity.js';
import { ${n.Plural}Controller } from './${plural}.controller.js';
import { ${n.Plural}Repository } from './${plural}.repository.js';
import { ${n.Plural}Service } from './${plural}.service.js';

/** ${n.Plural}: create and list at ${paths.collectionDoc}; get, replace and delete at /${plural}/{id}. */
@Module({
  imports: [TypeOrmModule.forFeature([${S}])${withParent(', PlantsModule')}],
  controllers: [${n.Plural}Controller],
  providers: [${n.Plural}Service, ${n.Plural}Repository],
})
export class ${n.Plural}Module {}
`,
  [`src/${plural}/${plural}.scopes.ts`]: `import type { ScopeDeclaration } from '../auth/scopes.js';

/** Not granted by default: a token gets them only when its --scopes names them. */
export const ${n.CONST}_SCOPES: readonly ScopeDeclaration[] = [
  { scope: '${plural}:read', grantedByDefault: false },
  { scope: '${plural}:write', grantedByDefault: false },
];
`,
  [`src/${plural}/${plural}.schema.ts`]: `import type { DatabaseSchema } from '../database/database-schema.js';
import { ${S} } from './entities/${singular}.entity.js';
import { ${migrationClass} } from '../../migrations/${migrationFile}.js';

/** The ${n.pluralWords} table. */
export const ${n.CONST}_SCHEMA: DatabaseSchema = {
  entities: [${S}],
  migrations: [${migrationClass}],
};
`,
  [`src/${plural}/entities/${singular}.entity.ts`]: `${importsFrom(
    [
      'Column',
      'CreateDateColumn',
      'Entity',
      'PrimaryGeneratedColumn',
      ...(parent ? ['ForeignKey', 'Index'] : []),
    ],
    'typeorm',
  )}
${parent || fields.some(({ entityType }) => entityType === 'bigint') ? "import { bigintTransformer } from '../../database/bigint.transformer.js';\n" : ''}
/** A ${n.singularWords}, as migrations/${migrationFile}.ts creates its table. */
@Entity({ name: '${n.table}' })${withParent(`
// A plant's ${n.pluralWords} by id: the list's keyset, and the foreign key's cascade.
@Index('${pageIndex}', ['plantId', 'id'])`)}
export class ${S} {
  /** Generated by the service, echoed by clients: a UUID (docs/extending.md, ids). */
  @PrimaryGeneratedColumn('uuid')
  id: string;
${withParent(`
  /**
   * The plant it belongs to: a foreign key by table name, so that this module depends on
   * the plants' table, never on their entity; deleting the plant deletes its ${n.pluralWords}.
   */
  @Column({ name: 'plant_id', type: 'bigint', transformer: bigintTransformer })
  @ForeignKey('plants', { name: '${fkey}', onDelete: 'CASCADE' })
  plantId: bigint;
`)}${fields
    .map(
      (field) => `
  ${field.optional ? '/** null: absent from the body. */\n  ' : ''}@Column({ ${field.column === field.name ? '' : `name: '${field.column}', `}${field.columnOptions}${field.optional ? ', nullable: true' : ''} })
  ${field.name}: ${field.entityType}${field.optional ? ' | null' : ''};
`,
    )
    .join('')}
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** What a client writes: the body of a create or a replace. */
export type ${entityFields} = Pick<${S}, ${fields.map(({ name }) => `'${name}'`).join(' | ')}>;
`,
  [`migrations/${migrationFile}.ts`]: `import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The ${n.pluralWords} table (src/${plural}/entities/${singular}.entity.ts). */
export class ${migrationClass} implements MigrationInterface {
  name = '${migrationClass}';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`
      CREATE TABLE ${n.table} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),${withParent(`
        plant_id bigint NOT NULL
          CONSTRAINT ${fkey} REFERENCES plants (id) ON DELETE CASCADE,`)}${fields
          .map(
            ({ column, sql, optional }) =>
              `\n        ${column} ${sql}${optional ? '' : ' NOT NULL'},`,
          )
          .join('')}
        created_at timestamptz NOT NULL DEFAULT now()
      )\`);${withParent(`
    // A plant's ${n.pluralWords} by id (the list), and the cascade of a plant's delete.
    await queryRunner.query('CREATE INDEX ${pageIndex} ON ${n.table} (plant_id, id)');`)}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE ${n.table}');
  }
}
`,
  [`src/${plural}/dto/${singular}-input.dto.ts`]: `${inputImports}

/**
 * The body of ${parent ? `POST /plants/{id}/${plural}` : `POST /${plural}`} and PUT /${plural}/{id}: what a client writes. Each
 * property's decorator validates exactly what it documents (docs/extending.md, fields).
 * Unknown properties are dropped by the validation pipe.
 */
@ApiSchema({ name: '${S}Input' })
export class ${S}InputDto {${fields
    .map(
      ({ decorator, name, optional, inputType }) => `
  ${decorator}
  ${name}${optional ? '?' : ''}: ${inputType};
`,
    )
    .join('')}}
`,
  [`src/${plural}/dto/${singular}.dto.ts`]: `import { ApiProperty, ApiSchema } from '@nestjs/swagger';
${parent || fields.some(({ schema }) => schema === '...INT64_SCHEMA') ? "import { INT64_SCHEMA } from '../../common/openapi/int64.schema.js';\n" : ''}import type { ${S} } from '../entities/${singular}.entity.js';

/** A ${n.singularWords} on the wire: shaped here, never the entity itself. */
@ApiSchema({ name: '${S}' })
export class ${S}Dto {
  @ApiProperty({ format: 'uuid' })
  id: string;
${withParent(`
  @ApiProperty({ ...INT64_SCHEMA, description: 'The plant it belongs to' })
  plantId: bigint;
`)}${fields
    .map(
      ({ schema, description, name, optional, wireType }) => `
  @ApiProperty({ ${schema}, description: ${js(description)}${optional ? ', required: false' : ''} })
  ${name}${optional ? '?' : ''}: ${wireType};
`,
    )
    .join('')}
  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

/** A property that is null in the table is absent from the answer. */
export function to${S}Dto({ id, ${withParent('plantId, ')}${names.join(', ')}, createdAt }: ${S}): ${S}Dto {
  return {
    id,${withParent('\n    plantId,')}${fields
      .map(({ name, optional, wire }) =>
        optional
          ? `\n    ...(${name} !== null && { ${wire(name) === name ? name : `${name}: ${wire(name)}`} }),`
          : `\n    ${wire(name) === name ? name : `${name}: ${wire(name)}`},`,
      )
      .join('')}
    createdAt: createdAt.toISOString(),
  };
}
`,
  [`src/${plural}/${plural}.repository.ts`]: `import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { retryRefused } from '../database/retry-refused.js';
import { ${S}, type ${entityFields} } from './entities/${singular}.entity.js';

export interface ${n.Plural}PageQuery {${withParent(`
  plantId: bigint;`)}
  /** Only ${n.pluralWords} with a greater id; undefined: from the first. */
  afterId?: string;
  count: number;
}

/** The only place ${n.pluralWords} meet SQL (through TypeORM). */
@Injectable()
export class ${n.Plural}Repository {
  constructor(@InjectRepository(${S}) private readonly ${n.plurals}: Repository<${S}>) {}

  insert(${parent ? `plantId: bigint, ` : ''}fields: ${entityFields}): Promise<${S}> {
    return retryRefused(() => this.${n.plurals}.save(this.${n.plurals}.create({ ${withParent('plantId, ')}...fields })));
  }

  findById(id: string): Promise<${S} | null> {
    return this.${n.plurals}.findOneBy({ id });
  }

  /** Up to \`count\` ${n.pluralWords} by ascending id: keyset pagination, stable under inserts and deletes. */
  findPage({ ${withParent('plantId, ')}afterId, count }: ${n.Plural}PageQuery): Promise<${S}[]> {
    const query = this.${n.plurals}
      .createQueryBuilder('${n.singularCamel}')${withParent(`
      .where('${n.singularCamel}.plantId = :plantId', { plantId: plantId.toString() })`)}
      .orderBy('${n.singularCamel}.id', 'ASC')
      .limit(count);
    if (afterId !== undefined) query.andWhere('${n.singularCamel}.id > :afterId', { afterId });
    return query.getMany();
  }

  /** The ${n.singularWords} as replaced, or null when there is none with this id. */
  async replace(id: string, fields: ${entityFields}): Promise<${S} | null> {
    const { affected } = await retryRefused(() => this.${n.plurals}.update({ id }, fields));
    return affected === 1 ? this.findById(id) : null;
  }

  /** @returns false when there is no ${n.singularWords} with this id. */
  async delete(id: string): Promise<boolean> {
    const { affected } = await retryRefused(() => this.${n.plurals}.delete({ id }));
    return affected === 1;
  }
}
`,
  [`src/${plural}/${plural}.service.ts`]: `import { Injectable, NotFoundException } from '@nestjs/common';
import { type Page, pageOf, readUuid, startAfter } from '../common/pagination/keyset-cursor.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
${withParent("import { isForeignKeyViolation } from '../database/database-errors.js';\nimport { PlantsReader } from '../plants/plants.reader.js';\n")}import type { ${S}InputDto } from './dto/${singular}-input.dto.js';
import type { ${S}, ${entityFields} } from './entities/${singular}.entity.js';
import { ${n.Plural}Repository } from './${plural}.repository.js';

/** The rules of ${n.pluralWords}: no HTTP, no SQL. */
@Injectable()
export class ${n.Plural}Service {
  constructor(
    private readonly ${n.plurals}: ${n.Plural}Repository,${withParent(`
    private readonly plants: PlantsReader,`)}
  ) {}
${
  parent
    ? `
  /** A plant's new ${n.singularWords}: 404 when the plant does not exist, or is deleted meanwhile. */
  async create(plantId: bigint, input: ${S}InputDto): Promise<${S}> {
    await this.requirePlant(plantId);
    try {
      return await this.${n.plurals}.insert(plantId, fieldsOf(input));
    } catch (error) {
      // The plant was deleted between the check and the insert.
      if (isForeignKeyViolation(error)) throw plantNotFound(plantId);
      throw error;
    }
  }

  /** A page of a plant's ${n.pluralWords} by ascending id; 404 when the plant does not exist. */
  async list(plantId: bigint, { limit, cursor }: PageQueryDto): Promise<Page<${S}>> {
    const afterId = startAfter(cursor, readUuid);
    await this.requirePlant(plantId);
    const ${n.plurals} = await this.${n.plurals}.findPage({ plantId, afterId, count: limit + 1 });
    return pageOf(${n.plurals}, limit, ({ id }) => id);
  }`
    : `
  create(input: ${S}InputDto): Promise<${S}> {
    return this.${n.plurals}.insert(fieldsOf(input));
  }

  /** A page of ${n.pluralWords} by ascending id. */
  async list({ limit, cursor }: PageQueryDto): Promise<Page<${S}>> {
    const afterId = startAfter(cursor, readUuid);
    const ${n.plurals} = await this.${n.plurals}.findPage({ afterId, count: limit + 1 });
    return pageOf(${n.plurals}, limit, ({ id }) => id);
  }`
}

  async findOne(id: string): Promise<${S}> {
    const found = await this.${n.plurals}.findById(id);
    if (!found) throw notFound(id);
    return found;
  }

  /** Replaces every field of an existing ${n.singularWords} (an absent optional one is cleared); never creates. */
  async replace(id: string, input: ${S}InputDto): Promise<${S}> {
    const replaced = await this.${n.plurals}.replace(id, fieldsOf(input));
    if (!replaced) throw notFound(id);
    return replaced;
  }

  async delete(id: string): Promise<void> {
    if (!(await this.${n.plurals}.delete(id))) throw notFound(id);
  }${withParent(`

  private async requirePlant(plantId: bigint): Promise<void> {
    if (!(await this.plants.exists(plantId))) throw plantNotFound(plantId);
  }`)}
}

/** What a body writes${fields.some(({ optional }) => optional) ? ': an absent optional field is null' : ''}. */
function fieldsOf({ ${names.join(', ')} }: ${S}InputDto): ${entityFields} {
  return { ${fields.map(({ name, optional }) => (optional ? `${name}: ${name} ?? null` : name)).join(', ')} };
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(\`there is no ${n.singularWords} with id \${id}\`);
}${withParent(`

function plantNotFound(plantId: bigint): NotFoundException {
  return new NotFoundException(\`there is no plant with id \${plantId}\`);
}`)}
`,
  [`src/${plural}/${plural}.controller.ts`]: `import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequiresScopes } from '../auth/decorators/requires-scopes.decorator.js';
import { ${parent ? 'ApiInt64IdParam, ' : ''}ApiNotFoundResponse, ApiUuidIdParam } from '../common/openapi/api-by-id.decorators.js';
import {
  ApiDatabaseBackedResponses,
  ApiErrorResponse,
  ApiJsonBodyResponses,
} from '../common/openapi/api-error-response.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { nextPageLink } from '../common/pagination/next-page-link.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
${withParent("import { ParseInt64Pipe } from '../common/validation/parse-int64.pipe.js';\n")}import { ${S}InputDto } from './dto/${singular}-input.dto.js';
import { ${S}Dto, to${S}Dto } from './dto/${singular}.dto.js';
import { ${n.Plural}Service } from './${plural}.service.js';

const Api${S}IdParam = () => ApiUuidIdParam('The ${n.singularWords}');${withParent(`
const ApiPlantIdParam = () => ApiInt64IdParam('The plant');`)}

/** HTTP only: requests to service calls, entities to DTOs. */
@Controller()
@ApiDatabaseBackedResponses()
export class ${n.Plural}Controller {
  constructor(private readonly ${n.plurals}: ${n.Plural}Service) {}

  @Post('${paths.collection}')
  @HttpCode(HttpStatus.CREATED)
  @RequiresScopes('${plural}:write')
  @ApiOperation({ operationId: 'create${S}', summary: 'Create a ${n.singularWords}${withParent(' of a plant')}' })${withParent(`
  @ApiPlantIdParam()`)}
  @ApiBody({ type: ${S}InputDto, required: true })
  @ApiCreatedResponse({ description: 'The new ${n.singularWords}', type: ${S}Dto })
  @ApiErrorResponse(400, '${parent ? 'The plant id is not an int64, or the' : 'The'} body is not a valid ${S}Input')${withParent(`
  @ApiNotFoundResponse('plant')`)}
  @ApiJsonBodyResponses()
  async create(
    ${withParent(`@Param('id', ParseInt64Pipe) plantId: bigint,\n    `)}@Body() body: ${S}InputDto,
  ): Promise<${S}Dto> {
    return to${S}Dto(await this.${n.plurals}.create(${withParent('plantId, ')}body));
  }

  @Get('${paths.collection}')
  @RequiresScopes('${plural}:read')
  @ApiOperation({
    operationId: 'list${n.Plural}',
    summary: 'List ${n.pluralWords}${withParent(' of a plant')}',
    description: ${js(`${parent ? `A plant's ${n.pluralWords}` : n.pluralWords.replace(/^./, (c) => c.toUpperCase())} by ascending id, a page at a time.`)},
  })${withParent(`
  @ApiPlantIdParam()`)}
  @ApiPageResponse({
    description: 'A page of ${n.pluralWords}',
    type: ${S}Dto,
    example: '${paths.linkExample}',
  })
  @ApiErrorResponse(400, '${parent ? 'The plant id is not an int64, or limit' : 'limit'} or cursor is invalid')${withParent(`
  @ApiNotFoundResponse('plant')`)}
  async list(
    ${withParent(`@Param('id', ParseInt64Pipe) plantId: bigint,\n    `)}@Query() query: PageQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${S}Dto[]> {
    const { items, nextCursor } = await this.${n.plurals}.list(${withParent('plantId, ')}query);
    if (nextCursor !== undefined) {
      reply.header('Link', nextPageLink(reply.request, { limit: query.limit }, nextCursor));
    }
    return items.map(to${S}Dto);
  }

  @Get('${plural}/:id')
  @RequiresScopes('${plural}:read')
  @ApiOperation({ operationId: 'get${S}', summary: 'Read a ${n.singularWords}' })
  @Api${S}IdParam()
  @ApiOkResponse({ description: 'The ${n.singularWords}', type: ${S}Dto })
  @ApiErrorResponse(400, 'The id is not a UUID, or the request has a body that is not JSON')
  @ApiNotFoundResponse('${n.singularWords}')
  @ApiJsonBodyResponses()
  async findOne(@Param('id', ParseUUIDPipe) id: string): Promise<${S}Dto> {
    return to${S}Dto(await this.${n.plurals}.findOne(id));
  }

  @Put('${plural}/:id')
  @RequiresScopes('${plural}:write')
  @ApiOperation({
    operationId: 'replace${S}',
    summary: 'Replace a ${n.singularWords}',
    description: 'Replaces every field of an existing ${n.singularWords}; an optional field left out is cleared. Never creates one.',
  })
  @Api${S}IdParam()
  @ApiBody({ type: ${S}InputDto, required: true })
  @ApiOkResponse({ description: 'The ${n.singularWords} as replaced', type: ${S}Dto })
  @ApiErrorResponse(400, 'The id is not a UUID, or the body is not a valid ${S}Input')
  @ApiNotFoundResponse('${n.singularWords}')
  @ApiJsonBodyResponses()
  async replace(
    @Param('id', ParseUUIDPipe) id: string,
    @Body() body: ${S}InputDto,
  ): Promise<${S}Dto> {
    return to${S}Dto(await this.${n.plurals}.replace(id, body));
  }

  @Delete('${plural}/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequiresScopes('${plural}:write')
  @ApiOperation({ operationId: 'delete${S}', summary: 'Delete a ${n.singularWords}' })
  @Api${S}IdParam()
  @ApiNoContentResponse({ description: 'The ${n.singularWords} is deleted' })
  @ApiErrorResponse(400, 'The id is not a UUID, or the request has a body that is not JSON')
  @ApiNotFoundResponse('${n.singularWords}')
  @ApiJsonBodyResponses()
  async delete(@Param('id', ParseUUIDPipe) id: string): Promise<void> {
    await this.${n.plurals}.delete(id);
  }
}
`,
  [`test/e2e/${plural}.e2e-spec.ts`]: e2eTest(),
};

/** The generated module's own e2e test: bodies typed by its DTO, scopes from APP_SCOPES. */
function e2eTest() {
  const Input = `${S}InputDto`;
  const typical = `{ ${fields.map(({ name, typical }) => `${name}: ${typical}`).join(', ')} }`;
  const wireOf = ({ name, wire, testWire }) => `${name}: ${(testWire ?? wire)(`body.${name}`)}`;
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
  const collection = parent ? '`/plants/${PLANT_ID}/' + plural + '`' : `'/${plural}'`;
  const offsetForms = fields.filter(({ offsetForm }) => offsetForm);
  return `import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';
import { stringifyJson } from '../../src/common/json/json-codec.js';
import type { ${Input} } from '../../src/${plural}/dto/${singular}-input.dto.js';
import type { ${S}Dto } from '../../src/${plural}/dto/${singular}.dto.js';
import { ${n.CONST}_SCOPES } from '../../src/${plural}/${plural}.scopes.js';
import { apiClient } from '../support/api-client.js';
import { expectError, nextPageUrl } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** A body the service takes, its fields typical ones. */
const TYPICAL: ${Input} = ${typical};

describe('${n.pluralWords}', () => {
  let api: TestApp;
  let send: ReturnType<typeof apiClient>;
${withParent(`  const PLANT_ID = 9223372036854775807n;
`)}
  const create = (body: ${Input} | string${withParent(', plantId = PLANT_ID')}) =>
    send('POST', ${parent ? '`/plants/${plantId}/' + plural + '`' : `'/${plural}'`}, typeof body === 'string' ? body : stringifyJson(body));
  const replace = (id: string, body: ${Input} | string) =>
    send('PUT', \`/${plural}/\${id}\`, typeof body === 'string' ? body : stringifyJson(body));
  const get = (id: string) => send('GET', \`/${plural}/\${id}\`);
  /** A body with one field's value replaced by \`value\`, any JSON at all. */
  const withValue = (field: keyof ${Input}, value: unknown) =>
    stringifyJson({ ...TYPICAL, [field]: value });
  /** The answer's body for a stored \`body\`, as the service writes it. */
  const answerFor = (body: ${Input}, { id, createdAt }: Pick<${S}Dto, 'id' | 'createdAt'>) =>
    stringifyJson({ id, ${withParent('plantId: PLANT_ID, ')}${fields.map(wireOf).join(', ')}, createdAt });

  /** Creates \`body\` and checks the answer: 201 with every field as sent. */
  async function created(body: ${Input}): Promise<${S}Dto> {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(201);
    const answer = response.json<${S}Dto>();
    expect(response.body).toBe(answerFor(body, answer));
    return answer;
  }

  beforeAll(async () => {
    api = await createTestApp();
    send = apiClient(api, await api.issueToken({ scopes: APP_SCOPES.all }));${withParent(`
    expect((await send('POST', '/plants', \`{"id": \${PLANT_ID}, "name": "plant"}\`)).statusCode).toBe(200);`)}
  });
  afterAll(() => api.close());

  it('creates a ${n.singularWords} and reads it back', async () => {
    const { id } = await created(TYPICAL);
    const read = await get(id);
    expect(read.statusCode).toBe(200);
    expect(read.json<${S}Dto>().id).toBe(id);
    expect(read.body).toBe(answerFor(TYPICAL, read.json()));
  });

  it.each<[string, ${Input}]>([
    ${edgeBodies.join(',\n    ')},
  ])('stores each field at its limits, as the document declares them: %s', async (_, body) => {
    const { id } = await created(body);
    const read = await get(id);
    expect(read.body).toBe(answerFor(body, read.json()));
  });
${
  offsetForms.length > 0
    ? `
  it.each<[keyof ${Input}, string, string]>([
    ${offsetForms.map(({ name, offsetForm: [sent, utc] }) => `[${js(name)}, ${js(sent)}, ${js(utc)}]`).join(',\n    ')},
  ])('takes %s with an offset (%s) and answers it in UTC (%s)', async (field, sent, utc) => {
    const response = await create(withValue(field, sent));
    expect(response.statusCode).toBe(201);
    expect(response.json<Record<string, unknown>>()[field]).toBe(utc);
  });
`
    : ''
}
  it.each<[keyof ${Input}, string, unknown, string]>([
    ${refusals.join(',\n    ')},
  ])('refuses %s = %s with 400, naming the field', async (field, _, value, message) => {
    expectError(await create(withValue(field, value)), 400, new RegExp(\`\${field} \${message}\`));
  });
${
  required.length > 0
    ? `
  it.each<keyof ${Input}>([${required.map(({ name }) => js(name)).join(', ')}])('refuses a body without %s', async (field) => {
    const { [field]: _, ...rest } = TYPICAL;
    expectError(await create(stringifyJson(rest)), 400, new RegExp(\`^\${field} \`));
  });
`
    : ''
}
  it('lists ${n.pluralWords} by ascending id, a page at a time, following the Link header', async () => {
${
  parent
    ? `    const plantId = 7n;
    expect((await send('POST', '/plants', \`{"id": \${plantId}, "name": "listed"}\`)).statusCode).toBe(200);
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const response = await create(TYPICAL, plantId);
      expect(response.statusCode).toBe(201);
      ids.push(response.json<${S}Dto>().id);
    }
    const listed: string[] = [];
    for (let url: string | undefined = \`/plants/\${plantId}/${plural}?limit=2\`; url !== undefined; ) {
      const page = await send('GET', url);
      expect(page.statusCode).toBe(200);
      const items = page.json<${S}Dto[]>();
      expect(items.length).toBeLessThanOrEqual(2);
      listed.push(...items.map(({ id }) => id));
      url = nextPageUrl(page);
    }
    // Only this plant's, each once, by id.
    expect(listed).toEqual([...ids].sort());`
    : `    const ids = [(await created(TYPICAL)).id, (await created(TYPICAL)).id, (await created(TYPICAL)).id];
    const listed: string[] = [];
    for (let url: string | undefined = '/${plural}?limit=2'; url !== undefined; ) {
      const page = await send('GET', url);
      expect(page.statusCode).toBe(200);
      const items = page.json<${S}Dto[]>();
      expect(items.length).toBeLessThanOrEqual(2);
      listed.push(...items.map(({ id }) => id));
      url = nextPageUrl(page);
    }
    // Each once, by id; the other tests' ${n.pluralWords} are there too.
    expect(listed).toEqual([...listed].sort());
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(expect.arrayContaining(ids));`
}
  });

  it.each([
    ['not base64url', '!!!'],
    ['not a UUID', Buffer.from('7').toString('base64url')],
    ['an upper-case UUID', Buffer.from('00000000-0000-4000-8000-00000000000A').toString('base64url')],
  ])('refuses a cursor that is %s with 400', async (_, cursor) => {
    expectError(await send('GET', \`\${${collection}}?cursor=\${cursor}\`), 400, /^cursor /);
  });

  it('replaces every field, clearing an optional one left out, and never creates', async () => {
    const { id } = await created(TYPICAL);
    const body: ${Input} = { ${fields
      .filter(({ optional }) => !optional)
      .map(({ name, edges }) => `${name}: ${edges.at(-1)}`)
      .join(', ')} };
    const replaced = await replace(id, body);
    expect(replaced.statusCode).toBe(200);
    expect(replaced.body).toBe(answerFor(body, replaced.json()));
    expect((await get(id)).body).toBe(replaced.body);
    expectError(await replace('00000000-0000-4000-8000-000000000000', body), 404, /^there is no /);
    expectError(await replace(id, withValue(${js(fields[0].name)}, ${fields[0].refused[0][0]})), 400, /^${fields[0].name} /);
  });

  it('deletes a ${n.singularWords}: 204, then 404', async () => {
    const { id } = await created(TYPICAL);
    expect((await send('DELETE', \`/${plural}/\${id}\`)).statusCode).toBe(204);
    expectError(await get(id), 404, /^there is no /);
    expectError(await send('DELETE', \`/${plural}/\${id}\`), 404, /^there is no /);
  });

  it('answers 404 for an id that names nothing, and 400 for one that is not a UUID', async () => {
    expectError(await get('00000000-0000-4000-8000-000000000000'), 404, /^there is no /);
    expectError(await get('not-a-uuid'), 400, /uuid/i);
  });

  it("needs a token (401) with the module's scopes (403)", async () => {
    expect((await apiClient(api, 'pst_unknown')('GET', ${collection})).statusCode).toBe(401);
    const theirs = new Set(${n.CONST}_SCOPES.map(({ scope }) => scope));
    const otherScopes = APP_SCOPES.all.filter((scope) => !theirs.has(scope));
    const other = apiClient(api, await api.issueToken({ scopes: otherScopes }));
    expect((await other('POST', ${collection}, stringifyJson(TYPICAL))).statusCode).toBe(403);
    expect((await other('GET', ${collection})).statusCode).toBe(403);
  });
${withParent(`
  it('answers 404 for a plant that does not exist', async () => {
    expectError(await create(TYPICAL, 404n), 404, /^there is no plant with id 404$/);
    expectError(await send('GET', '/plants/404/${plural}'), 404, /^there is no plant with id 404$/);
  });

  it("deletes a plant's ${n.pluralWords} with it", async () => {
    const plantId = 8n;
    expect((await send('POST', '/plants', \`{"id": \${plantId}, "name": "gone"}\`)).statusCode).toBe(200);
    const response = await create(TYPICAL, plantId);
    expect(response.statusCode).toBe(201);
    expect((await send('DELETE', \`/plants/\${plantId}\`)).statusCode).toBe(204);
    expectError(await get(response.json<${S}Dto>().id), 404, /^there is no /);
  });

  it("answers 201 or 404, never 5xx, when creates race the plant's delete", async () => {
    for (let round = 1n; round <= 5n; round++) {
      const plantId = 1000n + round;
      expect((await send('POST', '/plants', \`{"id": \${plantId}, "name": "raced"}\`)).statusCode).toBe(200);
      const [deleted, ...answers] = await Promise.all([
        send('DELETE', \`/plants/\${plantId}\`),
        ...Array.from({ length: 20 }, () => create(TYPICAL, plantId)),
      ]);
      expect(deleted.statusCode).toBe(204);
      for (const { statusCode } of answers) expect([201, 404]).toContain(statusCode);
      // The plant is gone, and so is every ${n.singularWords} that was created for it.
      for (const answer of answers.filter(({ statusCode }) => statusCode === 201))
        expect((await get(answer.json<${S}Dto>().id)).statusCode).toBe(404);
    }
  });
`)}});
`;
}

for (const [path, text] of Object.entries(files)) {
  mkdirSync(join(ROOT, path, '..'), { recursive: true });
  writeFileSync(join(ROOT, path), text);
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
