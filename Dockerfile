# syntax=docker/dockerfile:1
# Multi-stage build: compile native modules (better-sqlite3) in a full image, run in a slim one as a non-root user.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/gateway/package.json apps/gateway/
COPY packages/agent-core/package.json packages/agent-core/
COPY packages/adapters/package.json packages/adapters/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY apps apps
COPY packages packages
# Drop test-only dependencies; tsx stays (it is a runtime dependency of the gateway).
RUN npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
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
ENTRYPOINT ["node", "--import", "tsx", "apps/gateway/src/main.ts"]
CMD ["--role", "all"]
