// The yardstick: the same two operations written by hand on Fastify + pg, as lean as a
// careful person would write them. Prepared statements, the token's hash cached in the
// process for its lifetime, Fastify's own JSON parser (so, unlike the product, it does
// not keep int64 ids above 2^53 exact) and a schema for the body.
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_SIZE ?? 10),
});
/** sha256(token) → scopes, or null for an unknown token; never expires (see above). */
const tokens = new Map();

async function scopesOf(authorization) {
  const match = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
  if (!match) return null;
  const hash = createHash('sha256').update(match[1]).digest('hex');
  if (!tokens.has(hash)) {
    const { rows } = await pool.query({
      name: 'token',
      text: `SELECT scopes FROM api_tokens WHERE secret_hash = $1
             AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      values: [hash],
    });
    tokens.set(hash, rows[0]?.scopes ?? null);
  }
  return tokens.get(hash);
}

function authorize(scope) {
  return async (request, reply) => {
    const scopes = await scopesOf(request.headers.authorization);
    if (!scopes) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 401 });
    }
    if (!scopes.includes(scope)) return reply.code(403).send({ error: 403 });
  };
}

const text = (maxLength, minLength = 0) => ({ type: 'string', minLength, maxLength });
const app = Fastify();

app.post(
  '/plants',
  {
    onRequest: authorize('plants:write'),
    schema: {
      body: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'integer' }, name: text(255, 1), tag: text(255) },
      },
    },
  },
  async (request, reply) => {
    const { id, name, tag = null } = request.body;
    const inserted = await pool.query({
      name: 'insert',
      text: 'INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
      values: [id, name, tag],
    });
    if (inserted.rowCount === 0) {
      const { rows } = await pool.query({
        name: 'select',
        text: 'SELECT name, tag FROM plants WHERE id = $1',
        values: [id],
      });
      if (rows[0]?.name !== name || rows[0]?.tag !== tag) {
        return reply.code(409).send({ error: 409 });
      }
    }
    return tag === null ? { name } : { name, tag };
  },
);

app.get(
  '/plants/:id',
  {
    onRequest: authorize('plants:read'),
    schema: {
      params: {
        type: 'object',
        properties: { id: { type: 'string', pattern: '^-?(0|[1-9][0-9]{0,18})$' } },
      },
    },
  },
  async (request, reply) => {
    const { rows } = await pool.query({
      name: 'select',
      text: 'SELECT name, tag FROM plants WHERE id = $1',
      values: [request.params.id],
    });
    if (rows.length === 0) return reply.code(404).send({ error: 404 });
    const { name, tag } = rows[0];
    const plant = tag === null ? { name } : { name, tag };
    // The id is written back as the digits it came in, as the product does.
    return reply
      .type('application/json')
      .send(`{"id":${request.params.id},${JSON.stringify(plant).slice(1)}`);
  },
);

await app.listen({ port: Number(process.env.PORT ?? 3001), host: '127.0.0.1' });
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await app.close();
    await pool.end();
  });
}
