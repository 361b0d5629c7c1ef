/**
 * The key the tests' services encrypt webhook secrets with on a database server
 * (DATABASE_URL), where the service refuses to start without WEBHOOK_SECRET_KEYS. A test
 * key, known to everyone: never one to deploy.
 */
export const TEST_WEBHOOK_SECRET_KEYS = 'test:dGVzdC1rZXktZm9yLXdlYmhvb2stc2VjcmV0cy0zMmI=';

/** `env` with the test key when it names a database server and no key of its own. */
export function withTestSecretKeys(env: Record<string, string>): Record<string, string> {
  return env.DATABASE_URL && env.WEBHOOK_SECRET_KEYS === undefined
    ? { ...env, WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS }
    : env;
}
