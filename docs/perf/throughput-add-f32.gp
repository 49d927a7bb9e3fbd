# tbench plot: add (f32): GB/s vs size
# Render it again: cd to this folder, then: gnuplot throughput-add-f32.gp
set encoding utf8
set title 'add (f32): GB/s vs size' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'GB/s (bytes of the cost model / median)'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set terminal pngcairo size 900,624 font 'sans,9' noenhanced
set output 'throughput-add-f32.png'
plot 'throughput-add-f32.dat' index 0 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'add cpu[isa=scalar,threads=1]', \
     'throughput-add-f32.dat' index 1 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 1 pt 7 title 'add cpu[isa=scalar,threads=2]', \
     'throughput-add-f32.dat' index 2 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 1 pt 7 title 'add cpu[isa=auto,threads=1]', \
     'throughput-add-f32.dat' index 3 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 1 pt 7 title 'add cpu[isa=auto,threads=2]', \
     'throughput-add-f32.dat' index 4 using 1:2 with linespoints lw 2 lc rgb '#ff7f0e' dt 1 pt 7 title 'add@alloc cpu[isa=scalar,threads=1]', \
     'throughput-add-f32.dat' index 5 using 1:2 with linespoints lw 2 lc rgb '#17becf' dt 1 pt 7 title 'add@alloc cpu[isa=scalar,threads=2]', \
     'throughput-add-f32.dat' index 6 using 1:2 with linespoints lw 2 lc rgb '#8c564b' dt 1 pt 7 title 'add@alloc cpu[isa=auto,threads=1]', \
     'throughput-add-f32.dat' index 7 using 1:2 with linespoints lw 2 lc rgb '#e377c2' dt 1 pt 7 title 'add@alloc cpu[isa=auto,threads=2]', \
     'throughput-add-f32.dat' index 8 using 1:2 with linespoints lw 2 lc rgb '#bcbd22' dt 2 pt 5 title 'add numpy[threads=1,form=alloc]', \
     'throughput-add-f32.dat' index 9 using 1:2 with linespoints lw 2 lc rgb '#7f7f7f' dt 2 pt 5 title 'add numpy[threads=1,form=out]', \
     'throughput-add-f32.dat' index 10 using 1:2 with linespoints lw 2 lc rgb '#393b79' dt 2 pt 5 title 'add numpy[threads=2,form=alloc]', \
     'throughput-add-f32.dat' index 11 using 1:2 with linespoints lw 2 lc rgb '#637939' dt 2 pt 5 title 'add numpy[threads=2,form=out]', \
     'throughput-add-f32.dat' index 12 using 1:2 with linespoints lw 2 lc rgb '#1f77b4' dt 3 pt 9 title 'add torch[threads=1,form=alloc]', \
     'throughput-add-f32.dat' index 13 using 1:2 with linespoints lw 2 lc rgb '#d62728' dt 3 pt 9 title 'add torch[threads=1,form=out]', \
     'throughput-add-f32.dat' index 14 using 1:2 with linespoints lw 2 lc rgb '#2ca02c' dt 3 pt 9 title 'add torch[threads=2,form=alloc]', \
     'throughput-add-f32.dat' index 15 using 1:2 with linespoints lw 2 lc rgb '#9467bd' dt 3 pt 9 title 'add torch[threads=2,form=out]', \
     313.703867 with lines dt 5 lw 1.5 lc rgb '#444444' title 'add bandwidth L1, 2 threads: 313.7', \
     210.695759 with lines dt 5 lw 1.5 lc rgb '#999999' title 'add bandwidth L1, 1 thread: 210.7', \
     167.115884 with lines dt 3 lw 1.5 lc rgb '#444444' title 'add bandwidth L2, 2 threads: 167.1', \
     144.732654 with lines dt 4 lw 1.5 lc rgb '#444444' title 'add bandwidth L3, 2 threads: 144.7', \
     101.354687 with lines dt 3 lw 1.5 lc rgb '#999999' title 'add bandwidth L2, 1 thread: 101.4', \
     71.7723079 with lines dt 4 lw 1.5 lc rgb '#999999' title 'add bandwidth L3, 1 thread: 71.77'
set output
