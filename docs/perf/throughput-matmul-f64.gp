# tbench plot: matmul (f64): GFLOP/s vs size
# Render it again: cd to this folder, then: gnuplot throughput-matmul-f64.gp
set encoding utf8
set title 'matmul (f64): GFLOP/s vs size' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'M x N x K'
set logscale x
set xtics rotate by -30
set ylabel 'GFLOP/s (FLOPs of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'throughput-matmul-f64.png'
plot 'throughput-matmul-f64.dat' index 0 using 1:2:xtic(3) with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=auto,threads=1]', \
     51.3991507 with lines dt 4 lw 1.5 lc rgb '#444444' title 'FMA peak avx2 f64, 1 thread: 51.4', \
     25.2716416 with lines dt 2 lw 1.5 lc rgb '#444444' title 'FMA peak scalar f64, 1 thread: 25.27'
set output
