# tbench plot: cpu: roofline (measured peaks; each ok case a point)
# Render it again: cd to this folder, then: gnuplot roofline-cpu.gp
set encoding utf8
set title 'cpu: roofline (measured peaks; each ok case a point)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set logscale xy
set format x '%g'
set xlabel 'arithmetic intensity (FLOPs / byte of the cost model)'
set ylabel 'GFLOP/s'
set samples 400
set xrange [0.0208333:360.788]
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'roofline-cpu.png'
plot 'roofline-cpu.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (124)', \
     (x * 107.166065 < 32.9089703 ? x * 107.166065 : 32.9089703) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 107.2 GB/s, scalar 32.91 GFLOP/s, 1 thread(s)', \
     (x * 194.773826 < 66.684022 ? x * 194.773826 : 66.684022) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 194.8 GB/s, scalar 66.68 GFLOP/s, 2 thread(s)', \
     (x * 107.166065 < 190.912559 ? x * 107.166065 : 190.912559) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 107.2 GB/s, avx512 190.9 GFLOP/s, 1 thread(s)', \
     (x * 194.773826 < 377.934042 ? x * 194.773826 : 377.934042) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 194.8 GB/s, avx512 377.9 GFLOP/s, 2 thread(s)', \
     (x * 25.8353133 < 32.9089703 ? x * 25.8353133 : 32.9089703) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L3 25.84 GB/s, scalar 32.91 GFLOP/s, 1 thread(s)', \
     (x * 52.8346257 < 66.684022 ? x * 52.8346257 : 66.684022) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L3 52.83 GB/s, scalar 66.68 GFLOP/s, 2 thread(s)'
set output
