# syntax=docker/dockerfile:1
#
# Wire: one image for every role. The command picks the role:
#   node dist/apps/writer/main.js | dist/apps/reader/main.js | dist/apps/sweeper/main.js
#   node dist/apps/server/main.js   (the default: all roles in one process, as `npm start`)
#   node dist/apps/cli/main.js migrate | check-config   (the wire command line)
# Build:  docker build -t wire:0.1.0 .
# Pin the base image for byte-for-byte rebuilds:
#   docker build --build-arg NODE_IMAGE=node:24-slim@sha256:<digest> -t wire:0.1.0 .
# docs/deploy.md explains the image and the Kubernetes manifests in deploy/k8s.

# Node 24 LTS, the version the project pins for npm scripts (the `node` devDependency).
ARG NODE_IMAGE=node:24-slim

# ---- build: every dependency from the lockfile, then tsc writes dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the only install script in the tree is the `node` devDependency's, which fetches
# a second Node binary for npm scripts; the build runs tsc on the image's own Node instead
RUN npm ci --ignore-scripts --no-audit --no-fund
# glibc's malloc_trim for the idle collection (native/malloc-trim.c, loaded by libs/shared/malloc-trim.ts;
# docs/deploy.md): a C compiler in this stage only, the addon alone goes on
COPY native ./native
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/* \
 && mkdir -p dist/native && cc -shared -fPIC -O2 -o dist/native/malloc-trim.node native/malloc-trim.c
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
# the client library's sources: the wire command line (apps/cli) is built on it
COPY client/package.json ./client/package.json
COPY client/src ./client/src
COPY client/tsconfig.json ./client/tsconfig.json
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json
# the viewer (/view): its static page and the client library's ESM it runs, both into dist/
RUN node node_modules/typescript/bin/tsc -p client/tsconfig.json --outDir dist/apps/reader/view-client && cp -r apps/reader/view dist/apps/reader/view

# ---- deps: production dependencies only (no tsc, no tap, no `node` package) ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime: built output, production node_modules, migrations; nothing else ----
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="wire" \
      org.opencontainers.image.description="Wire: a message board server for software agents (writer, reader, sweeper)" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /app
# package.json marks dist/ as ES modules ("type": "module") and is how the code finds migrations/
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/apps ./dist/apps
COPY --from=build /app/dist/libs ./dist/libs
COPY --from=build /app/dist/native ./dist/native
# for `node dist/apps/cli/main.js migrate` (a migration Job) and the rest of the wire command line
COPY --from=build /app/dist/client ./dist/client
# the writer applies these on boot (libs/shared/db/migrate.ts reads <package root>/migrations/*.sql)
COPY migrations ./migrations
# the single process's first start loads this pristine embedded database instead of running initdb (half the peak)
COPY libs/shared/db/pglite-template.tgz libs/shared/db/pglite-template.json ./libs/shared/db/
# everything above is root-owned and read-only to the app; only the embedded database's default
# directory (WIRE_DATA_DIR=./.wire, used by the default single-process command) is writable
RUN mkdir -p /app/.wire && chown 1000:1000 /app/.wire
# numeric, so Kubernetes' runAsNonRoot can verify it (the node image's `node` user is 1000)
USER 1000:1000
EXPOSE 4000
# node runs as PID 1 with no shell or npm in between, so SIGTERM reaches Wire's graceful shutdown
ENTRYPOINT ["node"]
CMD ["dist/apps/server/main.js"]
