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
     (x * 90.0713726 < 23.7678894 ? x * 90.0713726 : 23.7678894) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 90.07 GB/s, scalar 23.77 GFLOP/s, 1 thread(s)', \
     (x * 105.875929 < 25.4928451 ? x * 105.875929 : 25.4928451) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 105.9 GB/s, scalar 25.49 GFLOP/s, 2 thread(s)', \
     (x * 90.0713726 < 105.207828 ? x * 90.0713726 : 105.207828) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 90.07 GB/s, avx512 105.2 GFLOP/s, 1 thread(s)', \
     (x * 105.875929 < 145.268785 ? x * 105.875929 : 145.268785) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 105.9 GB/s, avx512 145.3 GFLOP/s, 2 thread(s)', \
     (x * 15.0344451 < 23.7678894 ? x * 15.0344451 : 23.7678894) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L3 15.03 GB/s, scalar 23.77 GFLOP/s, 1 thread(s)', \
     (x * 16.698224 < 25.4928451 ? x * 16.698224 : 25.4928451) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L3 16.7 GB/s, scalar 25.49 GFLOP/s, 2 thread(s)'
set output
