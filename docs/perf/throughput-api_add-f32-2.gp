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
     314.434132 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 2 threads: 314.4', \
     204.183732 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 1 thread: 204.2', \
     139.013684 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 2 threads: 139', \
     90.1404502 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 1 thread: 90.14', \
     85.9384611 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 2 threads: 85.94', \
     71.8939412 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 1 thread: 71.89'
set output
