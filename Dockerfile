# One image for both roles: `node dist/main.js api` and `node dist/main.js worker`. Node.js 24 (the LTS .nvmrc names)
# on Debian: Temporal's core bridge ships glibc builds only, so the worker cannot run on an Alpine (musl) image.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-fund --no-audit
COPY tsconfig.json tsconfig.build.json ./
# `npm run build` is tsc and then this script, which copies the files tsc does not emit (the approval page's
# script and stylesheet) from src/ into dist/.
COPY scripts/copy-assets.mjs ./scripts/
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim
# A container is reached through its published port, so the API listens on every interface inside it.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-fund --no-audit && npm cache clean --force
COPY --from=build /app/dist ./dist
# The process runs as `node`, so the data directory is created and given to it here: a named volume mounted on
# /data for the first time takes this directory's owner, and the app can write to it.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# Metrics (GET /metrics, unauthenticated): on by default in production, on loopback unless METRICS_HOST says
# otherwise; docker-compose.yml opens it to its own network only, for a Prometheus there. Never publish it.
EXPOSE 9464
# The API's health (PostgreSQL and Temporal reachable). Compose gives the worker its own check instead (its
# WORKER_HEALTH_PORT endpoint).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/v1/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
CMD ["api"]
