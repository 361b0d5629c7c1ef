-- The two login roles (docs/operations/security.md#database-roles): the owner of the
-- database and its tables, which the migrate service runs as, and the API's, which owns
-- nothing and gets its rights from the migrations. Passwords for trying the stack, as the
-- superuser's in docker-compose.yml: set your own.
CREATE ROLE plant_store_owner LOGIN PASSWORD 'plant_store_owner';
CREATE ROLE plant_store LOGIN PASSWORD 'plant_store';
ALTER DATABASE plant_store OWNER TO plant_store_owner;
