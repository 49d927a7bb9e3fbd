# tbench plot: mlp_infer_step (f32): GFLOP/s vs size
# Render it again: cd to this folder, then: gnuplot throughput-mlp_infer_step-f32.gp
set encoding utf8
set title 'mlp_infer_step (f32): GFLOP/s vs size' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GFLOP/s (FLOPs of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,528 font 'sans,9' noenhanced
set output 'throughput-mlp_infer_step-f32.png'
plot 'throughput-mlp_infer_step-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=auto,threads=1]', \
     'throughput-mlp_infer_step-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 5 title 'blas[threads=1]', \
     'throughput-mlp_infer_step-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 2 pt 9 title 'torch[threads=1]', \
     102.625219 with lines dt 4 lw 1.5 lc rgb '#444444' title 'FMA peak avx2 f32, 1 thread: 102.6', \
     51.1395012 with lines dt 2 lw 1.5 lc rgb '#444444' title 'FMA peak scalar f32, 1 thread: 51.14'
set output
