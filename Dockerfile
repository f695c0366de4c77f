# The operator's image: one static binary and the bundled charts, nothing
# else (no shell, no package manager). No base image can be pulled where it
# is built, and none is needed.
#
# Build it with `make image` (static binary, `charts pull` of the pins into
# build/charts, then buildah); by hand, after those two steps:
#   buildah bud --storage-driver vfs --isolation chroot -t navique-operator:dev .
FROM scratch

ARG VERSION=dev
LABEL org.opencontainers.image.title="navique-ai-core-operator" \
      org.opencontainers.image.description="Navique AI Core Operator: an AI platform's building blocks from pinned Helm charts, without Helm" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/scigility/navique-ai-core-operator"

# glibc linked statically (crt-static), position-dependent (no relocations
# at start); DNS through glibc's built-in
# resolver, which reads these two files.
COPY build/rootfs/etc/passwd build/rootfs/etc/group build/rootfs/etc/nsswitch.conf /etc/
COPY build/navique-operator /navique-operator
# The pinned charts, verified against both digests when pulled; the
# operator checks each tarball's sha256 again before it loads it.
COPY build/charts/ /charts/

USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/navique-operator", "run", "--charts-dir", "/charts"]
