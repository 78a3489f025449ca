# posgate's container image: one static binary on an empty base.
#
# Build it with deploy/build-image TAG, which compiles the binary with the
# local Go toolchain (CGO_ENABLED=0, -tags timetzdata: the time-zone
# database is inside the binary) and prepares the build context this file
# copies from; nothing is pulled from a registry (FROM scratch is no
# image). deploy/check-image TAG checks what the image holds.
# docs/deployment.md, "Container image", says how to run it.
FROM scratch

ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="posgate" \
      org.opencontainers.image.description="POS integration gateway: the POS API, its OAuth2 identity provider and the operator API" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/posgate/posgate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

# The CA certificates of the build host (webhook receivers and any other
# HTTPS peer are verified against them), and a passwd/group naming the
# unprivileged user.
COPY etc/ /etc/
COPY posgate /posgate
# The SQLite database's directory, owned by the user that runs posgate.
COPY --chown=65532:65532 data/ /var/lib/posgate/

USER 65532:65532
WORKDIR /var/lib/posgate
VOLUME /var/lib/posgate
EXPOSE 8080
ENTRYPOINT ["/posgate"]
CMD ["serve", "--listen", ":8080", "--database", "/var/lib/posgate/posgate.db"]
