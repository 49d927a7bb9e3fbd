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
     (x * 104.078447 < 183.64995 ? x * 104.078447 : 183.64995) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 104.1 GB/s, avx512 183.6 GFLOP/s, 1 thread(s)', \
     (x * 204.039451 < 351.032797 ? x * 204.039451 : 351.032797) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 204 GB/s, avx512 351 GFLOP/s, 2 thread(s)', \
     (x * 78.7630127 < 183.64995 ? x * 78.7630127 : 183.64995) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 78.76 GB/s, avx512 183.6 GFLOP/s, 1 thread(s)', \
     (x * 154.792407 < 351.032797 ? x * 154.792407 : 351.032797) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 154.8 GB/s, avx512 351 GFLOP/s, 2 thread(s)'
set output
