# Build stage: compile TypeScript with the dev dependencies, then keep production ones only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --omit=optional
COPY tsconfig.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
COPY scripts/bundle-cli.mjs ./scripts/
# Then what only a compiler or an editor reads (type declarations, source maps, docs) and
# TypeORM's browser build: about two thirds of the production dependencies' size.
RUN npm run build && npm prune --omit=dev --omit=optional \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
      -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \) -delete \
 && rm -rf node_modules/typeorm/browser

# Runtime stage: the compiled service on a slim image, as the unprivileged `node` user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The release, late so that a new revision rebuilds no layer above. VERSION is
# package.json's (a test keeps them equal); REVISION, the commit built
# (`--build-arg REVISION=$(git rev-parse HEAD)`), is what the service reports, having no
# .git here (docs/operations/upgrading.md#releases).
ARG VERSION=1.0.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="plant-store" \
      org.opencontainers.image.description="Plant Store: the OpenAPI Plant Store sample as a production NestJS service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT"
ENV PLANT_STORE_REVISION=${REVISION}
USER node
EXPOSE 3000
# node:http, not fetch: loading undici doubled the check's CPU, and on a loaded host a
# process start alone can take seconds, which a 3 s limit counted against healthy replicas
# (the engine kills the check). The request itself is bounded apart: 5 s, /health/ready
# answers within 1 s when the database does not.
HEALTHCHECK --interval=10s --timeout=10s --start-period=10s --retries=3 \
  CMD ["node", "-e", "require('node:http').get('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready',{timeout:5000},r=>process.exit(r.statusCode===200?0:1)).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1))"]
# The same command as `npm run start:prod` (a test keeps them equal); the V8 settings trade
# Maglev (a JIT tier that gains nothing here) and heap headroom for memory, and keep each
# request's short-lived objects in the young generation (docs/performance.md).
CMD ["node", "--no-maglev", "--no-allocation-site-pretenuring", "--max-semi-space-size=8", "--heap-growing-percent=30", "dist/src/main.js"]
