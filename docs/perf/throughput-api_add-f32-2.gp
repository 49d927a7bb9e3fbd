# tbench plot: api_add (f32): GB/s vs size (part 2 of 2)
# Render it again: cd to this folder, then: gnuplot throughput-api_add-f32-2.gp
set encoding utf8
set title 'api_add (f32): GB/s vs size (part 2 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'throughput-api_add-f32-2.png'
plot 'throughput-api_add-f32-2.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 2 pt 7 title 'api_add[layer=3,pool=0] torch[threads=1]', \
     289.639829 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 2 threads: 289.6', \
     190.595331 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 2 threads: 190.6', \
     163.882062 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 1 thread: 163.9', \
     34.4423492 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 1 thread: 34.44', \
     31.2963696 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 1 thread: 31.3', \
     19.7246177 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 2 threads: 19.72'
set output
