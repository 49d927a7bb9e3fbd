# tbench plot: qr (f32): time per call vs size (median, 95% CI)
# Render it again: cd to this folder, then: gnuplot time-qr-f32.gp
set encoding utf8
set title 'qr (f32): time per call vs size (median, 95% CI)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'time per call'
set logscale y
set format y '%.0s %cs'
set offsets graph 0.05, graph 0.05, 0, 0
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'time-qr-f32.png'
plot 'time-qr-f32.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=scalar,threads=1]', \
     'time-qr-f32.dat' index 1 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#d62728' dt 1 pt 5 title 'cpu[isa=scalar,threads=2]', \
     'time-qr-f32.dat' index 2 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#2ca02c' dt 1 pt 9 title 'cpu[isa=auto,threads=1]', \
     'time-qr-f32.dat' index 3 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#9467bd' dt 1 pt 11 title 'cpu[isa=auto,threads=2]', \
     'time-qr-f32.dat' index 4 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#ff7f0e' dt 1 pt 13 title 'blas[threads=1]', \
     'time-qr-f32.dat' index 5 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#17becf' dt 1 pt 15 title 'blas[threads=2]'
set output
