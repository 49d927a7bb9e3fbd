# tbench plot: add_ (f32): GB/s vs size
# Render it again: cd to this folder, then: gnuplot throughput-add_-f32.gp
set encoding utf8
set title 'add_ (f32): GB/s vs size' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,528 font 'sans,9' noenhanced
set output 'throughput-add_-f32.png'
plot 'throughput-add_-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=scalar,threads=1]', \
     'throughput-add_-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 5 title 'cpu[isa=scalar,threads=2]', \
     'throughput-add_-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 title 'cpu[isa=auto,threads=1]', \
     'throughput-add_-f32.dat' index 3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 11 title 'cpu[isa=auto,threads=2]', \
     332.653619 with lines dt 5 lw 1.5 lc rgb '#444444' title 'update bandwidth L1, 2 threads: 332.7', \
     230.873482 with lines dt 4 lw 1.5 lc rgb '#444444' title 'update bandwidth L3, 2 threads: 230.9', \
     204.215957 with lines dt 5 lw 1.5 lc rgb '#999999' title 'update bandwidth L1, 1 thread: 204.2', \
     140.879399 with lines dt 3 lw 1.5 lc rgb '#444444' title 'update bandwidth L2, 2 threads: 140.9', \
     140.401824 with lines dt 3 lw 1.5 lc rgb '#999999' title 'update bandwidth L2, 1 thread: 140.4', \
     118.900621 with lines dt 4 lw 1.5 lc rgb '#999999' title 'update bandwidth L3, 1 thread: 118.9'
set output
