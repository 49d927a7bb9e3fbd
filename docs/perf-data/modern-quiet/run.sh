#!/bin/sh
# quiet-window measurements for issue 30's targets, one thread
set -u
cd /work/main
O=/tmp/q30
ld() { cut -d' ' -f1 /proc/loadavg; }
echo "second" >> $O/log


echo "attn start load $(ld)" >> $O/log
build/tbench run docs/perf-data/attn/attn-perf.json -f "*isa=avx2*" -o $O/attn -q 2>>$O/log
/usr/bin/python3 scripts/compare_numpy.py docs/perf-data/attn/attn-peers.json -o $O/attn-peers.json --threads 1 >>$O/log 2>&1
echo "attn end load $(ld)" >> $O/log
for i in 4 5 6; do
  echo "tfm pair $i load $(ld)" >> $O/log
  build/tbench run docs/perf-data/tfm30/step.json -o $O/tb-$i -q 2>>$O/log
  /usr/bin/python3 scripts/compare_torch_training.py docs/perf-data/tfm30/step.json -o $O/torch-$i.json --threads 1 >>$O/log 2>&1
done
echo "end load $(ld)" >> $O/log
