/** An entity or a migration: a class TypeORM instantiates itself. */
type SchemaClass = new () => unknown;

/**
 * What a feature module keeps in PostgreSQL: its entities and the migrations that create
 * their tables. Each module declares its own, as it declares its scopes; the application
 * gathers them (src/app.schema.ts), so that this layer never imports a feature.
 */
export interface DatabaseSchema {
  entities: SchemaClass[];
  migrations: SchemaClass[];
  /**
   * Tables the service's role may only read and append to: the owner grants it no UPDATE
   * or DELETE there (src/database/service-role.ts).
   */
  appendOnly?: string[];
}

/** A migration's timestamp, the digits its class name ends with. */
const timestampOf = ({ name }: SchemaClass) => Number(/\d+$/.exec(name)?.[0]);

/**
 * The modules' schemas as one: listed, not globbed, so it works compiled, under Vitest and
 * in the TypeORM CLI. The migrations in the order they run, their timestamps', whichever
 * module each belongs to.
 */
export function gatherSchemas(schemas: DatabaseSchema[]): DatabaseSchema {
  return {
    entities: schemas.flatMap(({ entities }) => entities),
    migrations: schemas
      .flatMap(({ migrations }) => migrations)
      .sort((a, b) => timestampOf(a) - timestampOf(b)),
    appendOnly: schemas.flatMap(({ appendOnly = [] }) => appendOnly),
  };
}
