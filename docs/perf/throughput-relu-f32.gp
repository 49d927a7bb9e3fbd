# tbench plot: relu (f32): GB/s vs size (part 1 of 2)
# Render it again: cd to this folder, then: gnuplot throughput-relu-f32.gp
set encoding utf8
set title 'relu (f32): GB/s vs size (part 1 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,560 font 'sans,9' noenhanced
set output 'throughput-relu-f32.png'
plot 'throughput-relu-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=scalar,threads=1]', \
     'throughput-relu-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 5 title 'cpu[isa=scalar,threads=2]', \
     'throughput-relu-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 title 'cpu[isa=auto,threads=1]', \
     'throughput-relu-f32.dat' index 3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 11 title 'cpu[isa=auto,threads=2]', \
     'throughput-relu-f32.dat' index 4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 2 pt 13 title 'numpy[threads=1,form=alloc]', \
     'throughput-relu-f32.dat' index 5 using 1:2 with linespoints lw 2 lc rgb '#17becf' dt 2 pt 15 title 'numpy[threads=1,form=out]', \
     'throughput-relu-f32.dat' index 6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 6 title 'numpy[threads=2,form=alloc]', \
     'throughput-relu-f32.dat' index 7 using 1:2 with linespoints lw 2 lc rgb '#e377c2' dt 2 pt 4 title 'numpy[threads=2,form=out]', \
     314.434132 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 2 threads: 314.4', \
     204.183732 with lines dt 5 lw 1.5 lc rgb '#999999' title 'copy bandwidth L1, 1 thread: 204.2', \
     139.013684 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 2 threads: 139', \
     90.1404502 with lines dt 3 lw 1.5 lc rgb '#999999' title 'copy bandwidth L2, 1 thread: 90.14', \
     85.9384611 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 2 threads: 85.94', \
     71.8939412 with lines dt 4 lw 1.5 lc rgb '#999999' title 'copy bandwidth L3, 1 thread: 71.89'
set output
