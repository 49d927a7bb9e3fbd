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
     (x * 95.3754959 < 29.8370652 ? x * 95.3754959 : 29.8370652) with lines lw 1.5 dt 1 lc rgb '#444444' title 'roof: L2 95.38 GB/s, scalar 29.84 GFLOP/s, 1 thread(s)', \
     (x * 174.969643 < 58.3409043 ? x * 174.969643 : 58.3409043) with lines lw 1.5 dt 2 lc rgb '#444444' title 'roof: L2 175 GB/s, scalar 58.34 GFLOP/s, 2 thread(s)', \
     (x * 95.3754959 < 176.536729 ? x * 95.3754959 : 176.536729) with lines lw 1.5 dt 3 lc rgb '#444444' title 'roof: L2 95.38 GB/s, avx512 176.5 GFLOP/s, 1 thread(s)', \
     (x * 174.969643 < 340.989486 ? x * 174.969643 : 340.989486) with lines lw 1.5 dt 4 lc rgb '#444444' title 'roof: L2 175 GB/s, avx512 341 GFLOP/s, 2 thread(s)', \
     (x * 27.5201663 < 29.8370652 ? x * 27.5201663 : 29.8370652) with lines lw 1.5 dt 5 lc rgb '#444444' title 'roof: L3 27.52 GB/s, scalar 29.84 GFLOP/s, 1 thread(s)', \
     (x * 55.9838233 < 58.3409043 ? x * 55.9838233 : 58.3409043) with lines lw 1.5 dt 6 lc rgb '#444444' title 'roof: L3 55.98 GB/s, scalar 58.34 GFLOP/s, 2 thread(s)'
set output
