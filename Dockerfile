# Bikaroo fleet MCP server: multi-stage build on Debian 12.
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
 && make \
 && test -x build/bikaroo-mcp

FROM debian:12-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libjansson4 libpq5 libcurl4 libcjose0 libssl3 ca-certificates \
      postgresql-client-15 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin bikaroo
COPY --from=build /src/build/bikaroo-mcp /usr/local/bin/bikaroo-mcp
COPY --from=build /src/migrations/ /usr/share/bikaroo/migrations/
COPY --from=build /src/resources/ /usr/share/bikaroo/resources/
COPY --from=build /src/prompts/ /usr/share/bikaroo/prompts/
ENV BIKAROO_MIGRATIONS_DIR=/usr/share/bikaroo/migrations \
    BIKAROO_RESOURCES_DIR=/usr/share/bikaroo/resources \
    BIKAROO_PROMPTS_DIR=/usr/share/bikaroo/prompts \
    BIKAROO_LISTEN=0.0.0.0 \
    BIKAROO_PORT=8080
USER bikaroo
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/bikaroo-mcp"]
CMD ["serve"]
