import { userInfo } from 'node:os';

/**
 * The variables a terminal's login shell sets. The service and the token CLI are spawned
 * with them, as a user runs them: `USER` once made a probe of the embedded PostgreSQL
 * connect as that user and mistake the refusal for "no server".
 */
export function loginEnvironment(): Record<string, string> {
  const { username, homedir, shell } = userInfo();
  return {
    PATH: process.env.PATH ?? '',
    USER: username,
    LOGNAME: username,
    HOME: homedir,
    SHELL: shell ?? '/bin/sh',
  };
}
