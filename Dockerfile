# One image for every Sluice service and the demo receiver; docker-compose.yml and deploy/ pick
# the command. No build step: the TypeScript sources run through tsx (docs/CONVENTIONS.md).
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages ./packages
COPY services ./services
COPY config ./config
# tsx is a dev dependency of the root, and the services run through it: keep dev dependencies.
RUN npm ci --include=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
ENV NODE_ENV=production
USER node
# SIGTERM goes straight to node (no shell in between), so each service shuts down gracefully.
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "services/ingest/src/main.ts"]
