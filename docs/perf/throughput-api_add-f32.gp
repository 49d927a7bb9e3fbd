# tbench plot: api_add (f32): GB/s vs size (part 1 of 2)
# Render it again: cd to this folder, then: gnuplot throughput-api_add-f32.gp
set encoding utf8
set title 'api_add (f32): GB/s vs size (part 1 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,560 font 'sans,9' noenhanced
set output 'throughput-api_add-f32.png'
plot 'throughput-api_add-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'api_add[layer=0,pool=0] cpu[isa=auto,threads=1]', \
     'throughput-api_add-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 5 title 'api_add[layer=1,pool=0] cpu[isa=auto,threads=1]', \
     'throughput-api_add-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 9 title 'api_add[layer=2,pool=0] cpu[isa=auto,threads=1]', \
     'throughput-api_add-f32.dat' index 3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 11 title 'api_add[layer=3,pool=0] cpu[isa=auto,threads=1]', \
     'throughput-api_add-f32.dat' index 4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 13 title 'api_add[layer=2,pool=1] cpu[isa=auto,threads=1]', \
     'throughput-api_add-f32.dat' index 5 using 1:2 with linespoints lw 2 lc rgb '#17becf' dt 2 pt 15 title 'api_add[layer=0,pool=0] torch[threads=1]', \
     'throughput-api_add-f32.dat' index 6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 2 pt 6 title 'api_add[layer=1,pool=0] torch[threads=1]', \
     'throughput-api_add-f32.dat' index 7 using 1:2 with linespoints lw 2 lc rgb '#e377c2' dt 2 pt 4 title 'api_add[layer=2,pool=0] torch[threads=1]', \
     271.800838 with lines dt 5 lw 1.5 lc rgb '#444444' title 'add bandwidth L1, 1 thread: 271.8', \
     92.9341269 with lines dt 3 lw 1.5 lc rgb '#444444' title 'add bandwidth L2, 1 thread: 92.93', \
     77.4898837 with lines dt 4 lw 1.5 lc rgb '#444444' title 'add bandwidth L3, 1 thread: 77.49', \
     24.4198345 with lines dt 2 lw 1.5 lc rgb '#444444' title 'add bandwidth DRAM, 1 thread: 24.42'
set output
