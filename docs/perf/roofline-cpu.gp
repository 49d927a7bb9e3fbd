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
set xrange [0.0208333:5073.29]
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'roofline-cpu.png'
plot 'roofline-cpu.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (162)', \
     (x * 182.170832 < 49.1050696 ? x * 182.170832 : 49.1050696) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L1 182.2 GB/s, scalar 49.11 GFLOP/s, 1 thread(s)', \
     (x * 182.170832 < 88.7543752 ? x * 182.170832 : 88.7543752) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L1 182.2 GB/s, scalar 88.75 GFLOP/s, 2 thread(s)', \
     (x * 182.170832 < 100.968196 ? x * 182.170832 : 100.968196) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L1 182.2 GB/s, avx2 101 GFLOP/s, 1 thread(s)', \
     (x * 182.170832 < 199.9149 ? x * 182.170832 : 199.9149) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L1 182.2 GB/s, avx2 199.9 GFLOP/s, 2 thread(s)', \
     (x * 75.8455434 < 49.1050696 ? x * 75.8455434 : 49.1050696) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L3 75.85 GB/s, scalar 49.11 GFLOP/s, 1 thread(s)', \
     (x * 147.844643 < 88.7543752 ? x * 147.844643 : 88.7543752) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L3 147.8 GB/s, scalar 88.75 GFLOP/s, 2 thread(s)'
set output
