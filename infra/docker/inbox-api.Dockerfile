# syntax=docker/dockerfile:1
# inbox-api image. Build from the repository root:
#   docker build -f infra/docker/inbox-api.Dockerfile -t inbox-api .
# The same image runs the server (default command) and the migration Job (node dist/migrate.js).

FROM node:24-slim AS build
WORKDIR /repo
# The pnpm version pinned by packageManager in the root package.json.
COPY package.json ./
RUN npm install --global "$(node -p 'require("./package.json").packageManager')"
# Dependencies are fetched from the lockfile alone, so this layer survives source changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
# Patched dependencies (pnpm-workspace.yaml, patchedDependencies) are patched from these files.
COPY patches ./patches
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline
RUN pnpm --filter inbox-api build
# --legacy: pnpm 10's default deploy needs inject-workspace-packages, which would make local
# development copy the workspace packages instead of linking them.
# --ignore-scripts: the app's postinstall runs `prisma generate`, whose CLI is a devDependency;
# the generated client is already compiled into dist/, and no production dependency needs a script.
RUN pnpm --filter inbox-api deploy --prod --legacy --ignore-scripts /deploy

FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0
# glibc serves buffers up to 32 MB (a whole inbound mail, its copies for pg and the workers) from
# its heap and keeps 128 MB of freed heap before giving it back: without this, each 1 MB mail maps
# fresh pages and faults them in on the event loop (bench:ingest, event-loop p99 with 1 MB mails
# 43-48 ms before, 38-45 ms after, in runs of the same day).
ENV MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=134217728
WORKDIR /app
COPY --from=build /deploy ./
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the image's `node` user).
USER 1000:1000
EXPOSE 8000
CMD ["node", "dist/server.js"]
