# syntax=docker/dockerfile:1
# inbox-mcp image: the MCP server over streamable HTTP. Build from the repository root:
#   docker build -f infra/docker/inbox-mcp.Dockerfile -t inbox-mcp .

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
RUN pnpm --filter inbox-mcp build
# --legacy: pnpm 10's default deploy needs inject-workspace-packages, which would make local
# development copy the workspace packages instead of linking them.
# --ignore-scripts: no production dependency needs an install script.
RUN pnpm --filter inbox-mcp deploy --prod --legacy --ignore-scripts /deploy

FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=build /deploy ./
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the image's `node` user).
USER 1000:1000
EXPOSE 8200
# Semi-spaces of 16 MB: V8's default on a large node is 64 MB (a 128 MB young generation), which a
# burst of concurrent requests grows to and the process then keeps resident. 8 MB (collab-api's)
# left more of such a burst in the old generation (inbox-mcp's bench:tasks).
CMD ["node", "--max-semi-space-size=16", "dist/main.js", "--transport", "http"]
