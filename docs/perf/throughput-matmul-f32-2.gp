# tbench plot: matmul (f32): GFLOP/s vs size (part 2 of 2)
# Render it again: cd to this folder, then: gnuplot throughput-matmul-f32-2.gp
set encoding utf8
set title 'matmul (f32): GFLOP/s vs size (part 2 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'M x N x K'
set logscale x
set xtics rotate by -30
set ylabel 'GFLOP/s (FLOPs of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'throughput-matmul-f32-2.png'
plot 'throughput-matmul-f32-2.dat' index 0 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 7 title 'numpy[threads=2,form=alloc]', \
     'throughput-matmul-f32-2.dat' index 1 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#d62728' dt 2 pt 5 title 'numpy[threads=2,form=out]', \
     'throughput-matmul-f32-2.dat' index 2 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#2ca02c' dt 3 pt 9 title 'torch[threads=1,form=alloc]', \
     'throughput-matmul-f32-2.dat' index 3 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#9467bd' dt 3 pt 11 title 'torch[threads=1,form=out]', \
     'throughput-matmul-f32-2.dat' index 4 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#ff7f0e' dt 3 pt 13 title 'torch[threads=2,form=alloc]', \
     'throughput-matmul-f32-2.dat' index 5 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#17becf' dt 3 pt 15 title 'torch[threads=2,form=out]', \
     200.523341 with lines dt 4 lw 1.5 lc rgb '#444444' title 'FMA peak avx2 f32, 2 threads: 200.5', \
     102.625219 with lines dt 4 lw 1.5 lc rgb '#444444' title 'FMA peak avx2 f32, 1 thread: 102.6', \
     76.5301677 with lines dt 2 lw 1.5 lc rgb '#444444' title 'FMA peak scalar f32, 2 threads: 76.53', \
     51.1395012 with lines dt 2 lw 1.5 lc rgb '#444444' title 'FMA peak scalar f32, 1 thread: 51.14'
set output
