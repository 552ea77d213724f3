# syntax=docker/dockerfile:1
# Multi-stage build: install and compile (TypeScript to dist/) in a full image, run the JavaScript in a slim one
# as a non-root user. Workspace packages resolve to their dist/ under the `@herald/dist` condition.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY apps/gateway/package.json apps/gateway/
COPY packages/agent-core/package.json packages/agent-core/
COPY packages/adapters/package.json packages/adapters/
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY scripts/build.js scripts/
COPY apps apps
COPY packages packages
# Compile to dist/ (scripts/build.js: tsc -b), then drop build- and test-only dependencies (typescript, tsx, vitest).
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--conditions=@herald/dist \
    HERALD_HOST=0.0.0.0 \
    HERALD_PORT=8080 \
    HERALD_DB=/data/herald.db
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.HERALD_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "--expose-gc", "apps/gateway/dist/main.js"]
CMD ["--role", "all"]
