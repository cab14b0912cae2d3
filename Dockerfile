# One image for every RoadNerd server: build with pnpm, run the esbuild bundles (no node_modules at run time).
#   docker build -t roadnerd-mcp .
#   docker run --rm --network host roadnerd-mcp servers/network/dist/main.js
FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN npm install -g pnpm@10.34.8
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json ./
COPY packages ./packages
COPY servers ./servers
COPY scripts ./scripts
RUN pnpm install --frozen-lockfile && pnpm build

FROM node:20-bookworm-slim
# iproute2: iface_info and route_info read the kernel through `ip -j`.
RUN apt-get update && apt-get install -y --no-install-recommends iproute2 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/servers/network/dist ./servers/network/dist
USER node
ENV HOST=127.0.0.1 NODE_ENV=production
ENTRYPOINT ["node"]
CMD ["servers/network/dist/main.js"]
