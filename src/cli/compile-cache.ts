import { enableCompileCache } from 'node:module';

/**
 * Imported first by every command line: Node.js keeps on disk (NODE_COMPILE_CACHE, else
 * the temporary directory) the compiled code of the modules loaded after it (TypeORM's,
 * class-validator's and pg's; the backup command's whole bundle, backup.launcher.ts), and
 * the next command starts from it. Quiet where the directory cannot be written: it runs
 * as without.
 */
enableCompileCache();
