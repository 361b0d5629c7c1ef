-- Through PgBouncer the API cannot send statement_timeout when it connects (PgBouncer
-- refuses unknown startup parameters), so its role, plant_store, carries it: the service's default,
-- DATABASE_STATEMENT_TIMEOUT_MS (docs/operations/configuration.md, "Behind a connection pooler").
ALTER ROLE plant_store SET statement_timeout = '5s';
