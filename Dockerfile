# Partner Gateway: a production image.
#   docker build -t partner-gateway .
#   docker run -e NODE_ENV=production -e SECRETS_KEY=... -e DATABASE_URL=... -p 4000:4000 partner-gateway
# Release step (before starting a new version with MIGRATE_ON_START=false):
#   docker run --rm -e SECRETS_KEY=... -e DATABASE_URL=... partner-gateway node dist/scripts/migrate.js
# .ci/check-image.sh runs these same stages without Docker (no daemon on the CI machines).

ARG NODE_IMAGE=node:20.20-bookworm-slim

# 1. Build: transpile TypeScript to dist/ (esbuild is a production dependency, so no dev tools are needed).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY schema ./schema
COPY src ./src
COPY scripts ./scripts
RUN npm run build

# 2. Run: production dependencies and dist/ only, as the unprivileged `node` user.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    SEED_DEMO=false \
    HOST=0.0.0.0 \
    PORT=4000 \
    PGLITE_DATA_DIR=/data/pglite
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 4000}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is PID 1's child-free main process: SIGTERM from `docker stop` reaches the server's drain.
# The young generation is sized on the command line (src/gc-tuning.ts, YOUNG_GENERATION_FLAG).
CMD ["node", "--min-semi-space-size=16", "--max-semi-space-size=32", "dist/src/main.js"]
