# syntax=docker/dockerfile:1

# mcpgw in a container. Two images from this file:
#
#   docker build --build-arg VERSION=$(git describe --always) -t mcpgw .
#       the static binary on distroless: Streamable HTTP and SSE upstreams
#   docker build --target with-node -t mcpgw:node .
#       the same binary on Node.js, for stdio upstreams started with npx or node
#
# Run it with the port published on the host's loopback only, and a token:
#
#   docker run -d --name mcpgw -p 127.0.0.1:7332:7332 -e MCPGW_TOKEN \
#     -v ~/.config/mcpgw:/config:ro -v mcpgw-data:/data mcpgw
#
# The config directory is read-only inside; the data volume keeps the
# metadata cache across containers, so a new one answers from it at once,
# and the daemon's state (audit log, OAuth tokens). Nothing else is
# written: --read-only (with --tmpfs /tmp for upstreams) works.
# Inside the container the daemon must listen on 0.0.0.0 (hence
# --allow-remote) to be reachable through the published port at all.
#
# Base images are named in full (registry host included), so that podman
# and other tools without docker.io as their default resolve them the same
# way. For builds that must not change under you, pin them by digest where
# you build: docker buildx imagetools inspect docker.io/library/golang:1.26-bookworm
# prints it; write FROM ...:1.26-bookworm@sha256:<digest>.
#
# HEALTHCHECK is part of Docker's image format, not OCI's: podman builds
# OCI images by default and drops it (build with --format docker to keep
# it), and Kubernetes ignores it (use a probe running `mcpgw healthcheck`
# or GET /healthz).

ARG GO_VERSION=1.26
ARG NODE_VERSION=22

# The binary: static, no cgo, no local paths, version stamped in.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS="$TARGETOS" GOARCH="$TARGETARCH" \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/mcpgw ./cmd/mcpgw
# The volume mount points, handed to the images' non-root users below.
RUN mkdir -p /out/config /out/data

# An init for PID 1: mcpgw starts upstreams, and their orphaned children
# must be reaped by someone. Built for the target platform, unlike the
# binary above.
FROM docker.io/library/debian:bookworm-slim AS init
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*

FROM docker.io/library/node:${NODE_VERSION}-bookworm-slim AS with-node
COPY --from=init /usr/bin/tini-static /usr/bin/tini
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/mcpgw /usr/local/bin/mcpgw
COPY --from=build --chown=node:node /out/config /config
COPY --from=build --chown=node:node /out/data /data
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false
# State (audit log, OAuth tokens, saved results) and the caches of npm and
# of what upstreams run go on the data volume, so the root filesystem can
# be read-only (docker run --read-only --tmpfs /tmp; the Helm chart's pods).
ENV XDG_STATE_HOME=/data XDG_CACHE_HOME=/data/cache npm_config_cache=/data/npm
USER node
VOLUME ["/config", "/data"]
EXPOSE 7332
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["/usr/local/bin/mcpgw", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/mcpgw"]
CMD ["serve", "--listen", "0.0.0.0:7332", "--allow-remote", "--config", "/config/mcp.json", "--cache", "/data/mcp-cache.json", "--socket", ""]

# The default image (the last stage): no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot AS static
COPY --from=init /usr/bin/tini-static /usr/bin/tini
COPY --from=build /out/mcpgw /usr/local/bin/mcpgw
COPY --from=build --chown=65532:65532 /out/config /config
COPY --from=build --chown=65532:65532 /out/data /data
# State on the data volume, as above: the root can be read-only.
ENV XDG_STATE_HOME=/data
USER 65532:65532
VOLUME ["/config", "/data"]
EXPOSE 7332
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["/usr/local/bin/mcpgw", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/mcpgw"]
CMD ["serve", "--listen", "0.0.0.0:7332", "--allow-remote", "--config", "/config/mcp.json", "--cache", "/data/mcp-cache.json", "--socket", ""]
