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
     (x * 37.7483869 < 36.672543 ? x * 37.7483869 : 36.672543) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 37.75 GB/s, avx2 36.67 GFLOP/s, 1 thread(s)', \
     (x * 217.037459 < 42.9767627 ? x * 217.037459 : 42.9767627) with lines lw 1.5 dt 2 lc rgb '#8c564b' title 'roof: L1 217 GB/s, avx2 42.98 GFLOP/s, 2 thread(s)', \
     (x * 40.7813149 < 42.9767627 ? x * 40.7813149 : 42.9767627) with lines lw 1.5 dt 3 lc rgb '#2ca02c' title 'roof: L2 40.78 GB/s, avx2 42.98 GFLOP/s, 2 thread(s)', \
     (x * 21.9212353 < 36.672543 ? x * 21.9212353 : 36.672543) with lines lw 1.5 dt 4 lc rgb '#9467bd' title 'roof: L3 21.92 GB/s, avx2 36.67 GFLOP/s, 1 thread(s)', \
     (x * 163.882062 < 36.672543 ? x * 163.882062 : 36.672543) with lines lw 1.5 dt 5 lc rgb '#ff7f0e' title 'roof: L1 163.9 GB/s, avx2 36.67 GFLOP/s, 1 thread(s)', \
     (x * 289.639829 < 42.9767627 ? x * 289.639829 : 42.9767627) with lines lw 1.5 dt 6 lc rgb '#17becf' title 'roof: L1 289.6 GB/s, avx2 42.98 GFLOP/s, 2 thread(s)'
set output
