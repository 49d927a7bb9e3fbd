# tbench plot: transpose (f64): GB/s vs size
# Render it again: cd to this folder, then: gnuplot throughput-transpose-f64.gp
set encoding utf8
set title 'transpose (f64): GB/s vs size' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'throughput-transpose-f64.png'
plot 'throughput-transpose-f64.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=auto,threads=1]', \
     204.183732 with lines dt 5 lw 1.5 lc rgb '#444444' title 'copy bandwidth L1, 1 thread: 204.2', \
     90.1404502 with lines dt 3 lw 1.5 lc rgb '#444444' title 'copy bandwidth L2, 1 thread: 90.14', \
     71.8939412 with lines dt 4 lw 1.5 lc rgb '#444444' title 'copy bandwidth L3, 1 thread: 71.89', \
     17.7573067 with lines dt 2 lw 1.5 lc rgb '#444444' title 'copy bandwidth DRAM, 1 thread: 17.76'
set output
