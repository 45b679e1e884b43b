# The hand-written reference for bench/bench_build.py --profile a100-pypi: the same pins as profiles/a100-pypi.yaml
# (TensorFlow 2.12 with NVIDIA's CUDA 11.8 / cuDNN 8.6 pip wheels on Debian 12), written the common way: one stage,
# apt then one `pip install --no-cache-dir` layer into a venv, the wheels' lib directories on LD_LIBRARY_PATH
# (TensorFlow 2.12 does not search site-packages/nvidia itself). The wheels come from the bench's shared wheelhouse,
# bind-mounted for the one RUN that reads them, with no index, as envgen's build reads them: neither side downloads
# in a timed build. `apt-get clean`: the local base has no docker-clean apt hook (the official image's), without it
# the downloaded .debs stay in the layer (about 100 MB). +1 package: --build-arg EXTRA=...
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/env
ARG EXTRA=""
RUN --mount=type=bind,source=wheels,target=/tmp/wheels \
    /opt/env/bin/pip install --no-cache-dir --no-index --find-links /tmp/wheels \
    tensorflow==2.12.0 \
    nvidia-cuda-runtime-cu11==11.8.89 nvidia-cublas-cu11==11.11.3.6 nvidia-cufft-cu11==10.9.0.58 \
    nvidia-curand-cu11==10.3.0.86 nvidia-cusolver-cu11==11.4.1.48 nvidia-cusparse-cu11==11.7.5.86 \
    nvidia-cudnn-cu11==8.6.0.163 nvidia-cuda-nvcc-cu11==11.8.89 numpy==1.23.5 $EXTRA
ENV PATH=/opt/env/bin:$PATH \
    LD_LIBRARY_PATH=/opt/env/lib/python3.11/site-packages/nvidia/cublas/lib:/opt/env/lib/python3.11/site-packages/nvidia/cuda_nvcc/lib:/opt/env/lib/python3.11/site-packages/nvidia/cuda_runtime/lib:/opt/env/lib/python3.11/site-packages/nvidia/cudnn/lib:/opt/env/lib/python3.11/site-packages/nvidia/cufft/lib:/opt/env/lib/python3.11/site-packages/nvidia/curand/lib:/opt/env/lib/python3.11/site-packages/nvidia/cusolver/lib:/opt/env/lib/python3.11/site-packages/nvidia/cusparse/lib
