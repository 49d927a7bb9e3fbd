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
set xrange [0.0104167:5073.29]
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'roofline-cpu.png'
plot 'roofline-cpu.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (174; each op named at its fastest)', \
     '' using 1:2:4 with labels left offset char 0.4,0.4 font ',7' tc rgb '#333333' notitle, \
     (x * 271.800838 < 51.1395012 ? x * 271.800838 : 51.1395012) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L1 271.8 GB/s, scalar 51.14 GFLOP/s, 1 thread(s)', \
     (x * 364.826805 < 76.5301677 ? x * 364.826805 : 76.5301677) with lines lw 1.5 dt 2 lc rgb '#8c564b' title 'roof: L1 364.8 GB/s, scalar 76.53 GFLOP/s, 2 thread(s)', \
     (x * 271.800838 < 102.625219 ? x * 271.800838 : 102.625219) with lines lw 1.5 dt 3 lc rgb '#2ca02c' title 'roof: L1 271.8 GB/s, avx2 102.6 GFLOP/s, 1 thread(s)', \
     (x * 364.826805 < 200.523341 ? x * 364.826805 : 200.523341) with lines lw 1.5 dt 4 lc rgb '#9467bd' title 'roof: L1 364.8 GB/s, avx2 200.5 GFLOP/s, 2 thread(s)', \
     (x * 77.4898837 < 51.1395012 ? x * 77.4898837 : 51.1395012) with lines lw 1.5 dt 5 lc rgb '#ff7f0e' title 'roof: L3 77.49 GB/s, scalar 51.14 GFLOP/s, 1 thread(s)', \
     (x * 149.152042 < 76.5301677 ? x * 149.152042 : 76.5301677) with lines lw 1.5 dt 6 lc rgb '#17becf' title 'roof: L3 149.2 GB/s, scalar 76.53 GFLOP/s, 2 thread(s)'
set output
