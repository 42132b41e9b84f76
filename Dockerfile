# The mcp-fleet image: one stage builds the `dist` binary (fat LTO, one codegen unit:
# the published build, see Cargo.toml) from the locked dependency
# set, the runtime stage is Debian slim (glibc and libgcc for the binary; /bin/sh for
# the merge Job's shard-* glob) with the binary only, run as a non-root user. TLS roots
# are compiled in (webpki-roots), so no CA bundle is needed.
#
#   podman build -t mcp-fleet .          (or docker build)
#   podman run --rm mcp-fleet --version
#
# Both base images are build arguments, for mirrors and for air-gapped builds:
#   --build-arg RUST_IMAGE=... --build-arg RUNTIME_IMAGE=...
ARG RUST_IMAGE=docker.io/library/rust:1.95-slim-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${RUST_IMAGE} AS build
WORKDIR /src
# The workspace's manifests and sources (the peer server is a workspace member: cargo
# reads its manifest, but only mcp-fleet is built).
COPY Cargo.toml Cargo.lock ./
COPY peers ./peers
COPY src ./src
# The built-in quickstart profile is compiled into the binary.
COPY profiles ./profiles
# The binary is stripped (install -s): the profile's line tables are for local
# debugging, not for the image.
RUN cargo build --profile dist --locked --bin mcp-fleet \
 && install -D -s -m 0755 target/dist/mcp-fleet /out/mcp-fleet

FROM ${RUNTIME_IMAGE} AS runtime
COPY --from=build /out/mcp-fleet /usr/local/bin/mcp-fleet
# Numeric, so Kubernetes' runAsNonRoot can check it; the shards write to a mounted
# results volume (fsGroup 10001 in deploy/kubernetes/base).
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["mcp-fleet"]
CMD ["--help"]
