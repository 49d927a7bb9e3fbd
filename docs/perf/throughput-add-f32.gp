# tbench plot: add (f32): GB/s vs size (part 1 of 2)
# Render it again: cd to this folder, then: gnuplot throughput-add-f32.gp
set encoding utf8
set title 'add (f32): GB/s vs size (part 1 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,560 font 'sans,9' noenhanced
set output 'throughput-add-f32.png'
plot 'throughput-add-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'add cpu[isa=scalar,threads=1]', \
     'throughput-add-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 5 title 'add cpu[isa=scalar,threads=2]', \
     'throughput-add-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 title 'add cpu[isa=auto,threads=1]', \
     'throughput-add-f32.dat' index 3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 11 title 'add cpu[isa=auto,threads=2]', \
     'throughput-add-f32.dat' index 4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 13 title 'add@alloc cpu[isa=scalar,threads=1]', \
     'throughput-add-f32.dat' index 5 using 1:2 with linespoints lw 2 lc rgb '#17becf' dt 1 pt 15 title 'add@alloc cpu[isa=scalar,threads=2]', \
     'throughput-add-f32.dat' index 6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 1 pt 6 title 'add@alloc cpu[isa=auto,threads=1]', \
     'throughput-add-f32.dat' index 7 using 1:2 with linespoints lw 2 lc rgb '#e377c2' dt 1 pt 4 title 'add@alloc cpu[isa=auto,threads=2]', \
     364.826805 with lines dt 5 lw 1.5 lc rgb '#444444' title 'add bandwidth L1, 2 threads: 364.8', \
     271.800838 with lines dt 5 lw 1.5 lc rgb '#999999' title 'add bandwidth L1, 1 thread: 271.8', \
     149.152042 with lines dt 4 lw 1.5 lc rgb '#444444' title 'add bandwidth L3, 2 threads: 149.2', \
     93.1304272 with lines dt 3 lw 1.5 lc rgb '#444444' title 'add bandwidth L2, 2 threads: 93.13', \
     92.9341269 with lines dt 3 lw 1.5 lc rgb '#999999' title 'add bandwidth L2, 1 thread: 92.93', \
     77.4898837 with lines dt 4 lw 1.5 lc rgb '#999999' title 'add bandwidth L3, 1 thread: 77.49'
set output
