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
set xrange [0.888889:360.788]
set terminal pngcairo size 900,528 font 'sans,9' noenhanced
set output 'roofline-blas.png'
plot 'roofline-blas.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cases (20)', \
     (x * 104.226464 < 180.837912 ? x * 104.226464 : 180.837912) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 104.2 GB/s, avx512 180.8 GFLOP/s, 1 thread(s)', \
     (x * 205.477525 < 244.188163 ? x * 205.477525 : 244.188163) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 205.5 GB/s, avx512 244.2 GFLOP/s, 2 thread(s)', \
     (x * 79.7567517 < 180.837912 ? x * 79.7567517 : 180.837912) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 79.76 GB/s, avx512 180.8 GFLOP/s, 1 thread(s)', \
     (x * 109.802153 < 244.188163 ? x * 109.802153 : 244.188163) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 109.8 GB/s, avx512 244.2 GFLOP/s, 2 thread(s)'
set output
