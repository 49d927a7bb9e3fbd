#!/bin/sh
# Regenerate every committed oracle vector file under tests/data/ (each
# generator is deterministic; see its docstring for where its expected
# values come from).  Needs Debian's /usr/bin/python3 with python3-numpy,
# python3-torch and python3-mpmath (not the python3 first on PATH).
#
#   sh scripts/gen_vectors.sh && git diff --stat tests/data
#
# An unchanged tree afterwards means the vectors are what the scripts make.
set -eu
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
$PY scripts/gen_ref_vectors.py      # first ten ops   -> ref_vectors.h
$PY scripts/gen_oracle.py           # issue-3 ops     -> oracle_vectors.h
$PY scripts/gen_oracle_create.py    # creation ops    -> create_vectors.h
$PY scripts/gen_oracle_optim.py     # optimizer steps -> optim_vectors.h
$PY scripts/gen_oracle_linalg.py    # svd, qr, eigh   -> linalg_vectors.h
$PY scripts/gen_oracle_autograd.py  # backward ops    -> autograd_vectors.h
$PY scripts/gen_oracle_norm.py      # normalization   -> norm_vectors.h
$PY scripts/gen_oracle_attn.py      # sdpa, sdpa_backward -> attn_vectors.h
$PY scripts/gen_oracle_embed.py     # loss, embedding -> embed_vectors.h
$PY scripts/gen_oracle_einsum.py    # einsum          -> einsum_vectors.h
$PY scripts/gen_oracle_tfm.py      # transformer block -> tfm_vectors.h
