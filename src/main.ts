import { enableCompileCache } from 'node:module';

// Most of start-up is compiling the module graph. With Node's compile cache a restart (a
// crash, a deploy, another replica on the same disk) skips that work; the cache lives in
// NODE_COMPILE_CACHE when set, else in the OS temp directory, and is rebuilt when stale.
enableCompileCache();
await import('./bootstrap.js');
