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
     (x * 104.226464 < 32.1740219 ? x * 104.226464 : 32.1740219) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 104.2 GB/s, scalar 32.17 GFLOP/s, 1 thread(s)', \
     (x * 205.477525 < 41.7312055 ? x * 205.477525 : 41.7312055) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 205.5 GB/s, scalar 41.73 GFLOP/s, 2 thread(s)', \
     (x * 104.226464 < 180.837912 ? x * 104.226464 : 180.837912) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 104.2 GB/s, avx512 180.8 GFLOP/s, 1 thread(s)', \
     (x * 205.477525 < 244.188163 ? x * 205.477525 : 244.188163) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 205.5 GB/s, avx512 244.2 GFLOP/s, 2 thread(s)', \
     (x * 26.3681308 < 32.1740219 ? x * 26.3681308 : 32.1740219) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L3 26.37 GB/s, scalar 32.17 GFLOP/s, 1 thread(s)', \
     (x * 30.5730596 < 41.7312055 ? x * 30.5730596 : 41.7312055) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L3 30.57 GB/s, scalar 41.73 GFLOP/s, 2 thread(s)'
set output
