-- Through PgBouncer the API cannot send statement_timeout when it connects (PgBouncer
-- refuses unknown startup parameters), so its role carries it: the service's default,
-- DATABASE_STATEMENT_TIMEOUT_MS (docs/operations/configuration.md, "Behind a connection pooler").
ALTER ROLE CURRENT_USER SET statement_timeout = '5s';
