# The hand-written reference for bench/bench_build.py --profile cpu-smoke: the same pins as profiles/cpu-smoke.yaml,
# written the common way (one stage, apt then one `pip install --no-cache-dir` layer into a venv). The wheels come
# from the bench's shared wheelhouse, bind-mounted for the one RUN that reads them (a COPY would leave them in a
# layer of the image: the reference before #44 did, 183 MB of the torch wheel counted against it), with no index,
# as envgen's build reads them: neither side downloads in a timed build. `apt-get clean`: the local base has no
# docker-clean apt hook (the official image's), without it the downloaded .debs stay in the layer (about 100 MB).
# +1 package: --build-arg EXTRA=...
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/env
ARG EXTRA=""
RUN --mount=type=bind,source=wheels,target=/tmp/wheels \
    /opt/env/bin/pip install --no-cache-dir --no-index --find-links /tmp/wheels \
    tensorflow-cpu==2.12.0 torch==2.13.0+cpu numpy==1.23.5 $EXTRA
ENV PATH=/opt/env/bin:$PATH
