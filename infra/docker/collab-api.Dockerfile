# syntax=docker/dockerfile:1
# collab-api image. Build from the repository root:
#   docker build -f infra/docker/collab-api.Dockerfile -t collab-api .
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
RUN pnpm --filter collab-api build
# --legacy: pnpm 10's default deploy needs inject-workspace-packages, which would make local
# development copy the workspace packages instead of linking them.
# --ignore-scripts: the app's postinstall runs `prisma generate`, whose CLI is a devDependency;
# the generated client is already compiled into dist/, and no production dependency needs a script.
RUN pnpm --filter collab-api deploy --prod --legacy --ignore-scripts /deploy

FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=build /deploy ./
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the image's `node` user).
USER 1000:1000
EXPOSE 8100
# Semi-spaces of 8 MB: V8's default on a large node is 64 MB (a 128 MB young generation), which
# the process keeps resident once it has run a few scavenges; the API's requests allocate little.
CMD ["node", "--max-semi-space-size=8", "dist/server.js"]
