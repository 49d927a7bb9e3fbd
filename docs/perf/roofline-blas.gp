# tbench plot: blas: roofline (measured peaks; each ok case a point)
# Render it again: cd to this folder, then: gnuplot roofline-blas.gp
set encoding utf8
set title 'blas: roofline (measured peaks; each ok case a point)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set logscale xy
set format x '%g'
set xlabel 'arithmetic intensity (FLOPs / byte of the cost model)'
set ylabel 'GFLOP/s'
set samples 400
set xrange [0.888889:5073.29]
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'roofline-blas.png'
plot 'roofline-blas.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (49; each op named at its fastest)', \
     '' using 1:2:4 with labels left offset char 0.4,0.4 font ',7' tc rgb '#333333' notitle, \
     (x * 92.9341269 < 102.625219 ? x * 92.9341269 : 102.625219) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 92.93 GB/s, avx2 102.6 GFLOP/s, 1 thread(s)', \
     (x * 364.826805 < 200.523341 ? x * 364.826805 : 200.523341) with lines lw 1.5 dt 2 lc rgb '#8c564b' title 'roof: L1 364.8 GB/s, avx2 200.5 GFLOP/s, 2 thread(s)', \
     (x * 93.1304272 < 200.523341 ? x * 93.1304272 : 200.523341) with lines lw 1.5 dt 3 lc rgb '#2ca02c' title 'roof: L2 93.13 GB/s, avx2 200.5 GFLOP/s, 2 thread(s)', \
     (x * 77.4898837 < 102.625219 ? x * 77.4898837 : 102.625219) with lines lw 1.5 dt 4 lc rgb '#9467bd' title 'roof: L3 77.49 GB/s, avx2 102.6 GFLOP/s, 1 thread(s)', \
     (x * 204.183732 < 102.625219 ? x * 204.183732 : 102.625219) with lines lw 1.5 dt 5 lc rgb '#ff7f0e' title 'roof: L1 204.2 GB/s, avx2 102.6 GFLOP/s, 1 thread(s)', \
     (x * 314.434132 < 200.523341 ? x * 314.434132 : 200.523341) with lines lw 1.5 dt 6 lc rgb '#17becf' title 'roof: L1 314.4 GB/s, avx2 200.5 GFLOP/s, 2 thread(s)'
set output
