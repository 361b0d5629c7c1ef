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
}

/** The modules' schemas as one: listed, not globbed, so it works compiled, under Vitest and in the TypeORM CLI. */
export function gatherSchemas(schemas: DatabaseSchema[]): DatabaseSchema {
  return {
    entities: schemas.flatMap(({ entities }) => entities),
    migrations: schemas.flatMap(({ migrations }) => migrations),
  };
}
