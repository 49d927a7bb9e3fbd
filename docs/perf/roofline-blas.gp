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
     (x * 119.713902 < 227.906478 ? x * 119.713902 : 227.906478) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 119.7 GB/s, avx512 227.9 GFLOP/s, 1 thread(s)', \
     (x * 238.635198 < 431.69853 ? x * 238.635198 : 431.69853) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 238.6 GB/s, avx512 431.7 GFLOP/s, 2 thread(s)', \
     (x * 91.8798857 < 227.906478 ? x * 91.8798857 : 227.906478) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 91.88 GB/s, avx512 227.9 GFLOP/s, 1 thread(s)', \
     (x * 178.933507 < 431.69853 ? x * 178.933507 : 431.69853) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 178.9 GB/s, avx512 431.7 GFLOP/s, 2 thread(s)'
set output
