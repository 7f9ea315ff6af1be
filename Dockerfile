# The cored image: a static binary on an empty base, run as a non-root
# user, its embedded store in the /data volume.
#   docker build -t cored .
#   docker run -p 8080:8080 -v core-data:/data cored
# The build stage runs .ci/build-cored, which CI runs too (CI has no
# Docker engine): the binary the image ships is built the way CI checks.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN .ci/build-cored /out/cored && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cored /usr/local/bin/cored
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
VOLUME /data
EXPOSE 8080
ENV CORE_ADDR=0.0.0.0:8080 CORE_DATA_DIR=/data
HEALTHCHECK --interval=10s --timeout=6s --start-period=10s --retries=3 CMD ["/usr/local/bin/cored", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/cored"]
CMD ["serve"]
