# One image for every Sluice service and the demo receiver; docker-compose.yml and deploy/ pick
# the command. No build step: Node 24 runs the TypeScript sources itself with its built-in type
# stripping (docs/CONVENTIONS.md), so the image holds the sources and the production dependencies.
#
# No HEALTHCHECK: on Kubernetes the kubelet's probes on /healthz and /readyz decide
# (deploy/kubernetes), and docker-compose.yml declares its own checks.

# Stage 1: the production dependencies, installed from the lockfile (no dev dependencies, no
# install scripts: none of the production dependencies needs one).
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages ./packages
COPY services ./services
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Stage 2: what runs. Sources and node_modules belong to root and are read-only for the service.
FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app ./
COPY config ./config
# The base image's `node` user, by number so Kubernetes' runAsNonRoot can check it.
USER 1000:1000
# SIGTERM goes straight to node (no shell in between), so each service shuts down gracefully.
CMD ["node", "--max-semi-space-size=64", "services/ingest/src/main.ts"]
