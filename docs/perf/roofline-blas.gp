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
plot 'roofline-blas.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (49)', \
     (x * 98.4454922 < 100.968196 ? x * 98.4454922 : 100.968196) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 98.45 GB/s, avx2 101 GFLOP/s, 1 thread(s)', \
     (x * 182.170832 < 199.9149 ? x * 182.170832 : 199.9149) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L1 182.2 GB/s, avx2 199.9 GFLOP/s, 2 thread(s)', \
     (x * 170.883111 < 199.9149 ? x * 170.883111 : 199.9149) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 170.9 GB/s, avx2 199.9 GFLOP/s, 2 thread(s)', \
     (x * 75.8455434 < 100.968196 ? x * 75.8455434 : 100.968196) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L3 75.85 GB/s, avx2 101 GFLOP/s, 1 thread(s)', \
     (x * 163.070253 < 100.968196 ? x * 163.070253 : 100.968196) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L1 163.1 GB/s, avx2 101 GFLOP/s, 1 thread(s)', \
     (x * 256.631158 < 199.9149 ? x * 256.631158 : 199.9149) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L1 256.6 GB/s, avx2 199.9 GFLOP/s, 2 thread(s)'
set output
