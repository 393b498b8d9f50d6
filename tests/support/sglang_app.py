"""An SGLang stack and app for tests/fixtures/catalog_small (tests/engines/test_sglang_fit.py, tests/test_walk.py):
`STACK` as stacks/sglang-test.yaml, `APP` (`.format(context=N)`) as apps/gemmasglang.yaml; the app leaves its GPU
memory to the fit."""

from __future__ import annotations

STACK = """id: sglang-test
title: SGLang test stack
engine: sglang
fork: upstream
image: lmsysorg/sglang:v0.5.14-cu130
version: 0.5.14
port: 30000
command: [python3, -m, sglang.launch_server]
sources:
  - ref: github.com/beclab/apps sglangqwen359bawq4bitv3/templates/sglang.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049
"""
APP = """name: gemmasglang
title: Gemma SGLang Lab
description: Gemma 4 E4B on SGLang.
icon: https://example.org/icons/gemmalab.png
owners: [labmaintainer]
model: gemma4-e4b
quantization: bf16
stack: sglang-test
device: lab-4090
served_name: gemma-4-e4b
context_length: {context}
resources: {{cpu_request: "2", cpu_limit: "8", memory_request: 8Gi, memory_limit: 24Gi, disk_request: 20Gi, disk_limit: 30Gi}}
version: 1.0.0
status: active
"""
