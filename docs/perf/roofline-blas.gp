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
set terminal pngcairo size 900,528 font 'sans,9' noenhanced
set output 'roofline-blas.png'
plot 'roofline-blas.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (49)', \
     (x * 101.781758 < 175.441349 ? x * 101.781758 : 175.441349) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 101.8 GB/s, avx512 175.4 GFLOP/s, 1 thread(s)', \
     (x * 57.0749841 < 299.511863 ? x * 57.0749841 : 299.511863) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 57.07 GB/s, avx512 299.5 GFLOP/s, 2 thread(s)', \
     (x * 74.0417206 < 175.441349 ? x * 74.0417206 : 175.441349) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 74.04 GB/s, avx512 175.4 GFLOP/s, 1 thread(s)', \
     (x * 54.984696 < 299.511863 ? x * 54.984696 : 299.511863) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 54.98 GB/s, avx512 299.5 GFLOP/s, 2 thread(s)'
set output
